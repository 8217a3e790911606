#pragma once
// How tools and tool messages reach the model: THE one place that decides it.
//
// A model whose own Jinja chat template takes tools (Qwen, Llama 3.x, Hermes,
// Mistral, ...) gets them as it was trained to: `tools` in the template's context,
// assistant messages with their `tool_calls`, tool replies with `tool_call_id`.
// Otherwise (a template without tools, or a built-in format) the tools are described
// in a system-message preamble in the Hermes / Qwen style (function signatures inside
// <tools></tools>, calls expected as <tool_call>{"name", "arguments"}</tool_call>),
// assistant calls are written back in that format and `role: "tool"` replies become
// user turns wrapped in <tool_response></tool_response>. Parsing the reply accepts
// every family's format either way.
#include <vector>

#include "server/tool_calls.h"
#include "tokenizer/chat_template.h"

namespace seer::server {

// `messages` may hold roles system, user, assistant and tool; `info[i]` belongs to
// messages[i]. The result holds only system, user and assistant. With no tools (or
// tool_choice "none") no preamble is added.
std::vector<ChatMessage> prompt_messages_with_tools(const std::vector<ChatMessage>& messages,
                                                    const std::vector<MessageToolInfo>& info,
                                                    const std::vector<ToolFunction>& tools, const ToolChoice& choice);

// The prompt text of a chat that may carry tools (ending with the assistant turn
// opener), by the rule above; `kwargs` are extra template variables
// (chat_template_kwargs). Throws seer::Error when the template refuses it.
std::string render_chat_prompt(const ChatTemplate& chat_template, const std::vector<ChatMessage>& messages,
                               const std::vector<MessageToolInfo>& info, const std::vector<ToolFunction>& tools,
                               const ToolChoice& choice, const nlohmann::ordered_json& kwargs = nullptr);

}  // namespace seer::server
