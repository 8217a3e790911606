#pragma once
// How tools and tool messages reach the model: THE one place that decides it.
//
// Until seer renders each model's own Jinja chat template (which takes `tools` and
// `tool_calls` itself), the tools are described in a system-message preamble in the
// Hermes / Qwen style (function signatures inside <tools></tools>, calls expected as
// <tool_call>{"name", "arguments"}</tool_call>), assistant calls are written back in
// that format and `role: "tool"` replies become user turns wrapped in
// <tool_response></tool_response>. When the template interpreter lands, this function
// returns the messages unchanged and hands tools and calls to the template instead;
// nothing else needs to change (parsing accepts every family's format).
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

}  // namespace seer::server
