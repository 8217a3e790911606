#pragma once
// Tool calls of /v1/chat/completions: the request's `tools` / `tool_choice` /
// `parallel_tool_calls`, and the reader every tool-call format falls back on
// (tool_formats/; docs/serving.md "Tool calls"), which takes the three formats seer
// read first, whichever the model writes:
//   Hermes / Qwen   <tool_call>{"name": ..., "arguments": {...}}</tool_call> (repeated)
//   Llama 3.x       {"name": ..., "parameters": {...}}, optionally after <|python_tag|>
//                   (several separated by ';' or spaces)
//   Mistral         [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]
//                   or [TOOL_CALLS]name[ARGS]{...}
// A call's JSON object ends at its own closing brace, so a delimiter inside one of its
// strings never ends it.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_call_stream.h"
#include "server/tool_formats/tool_format.h"
#include "server/tool_types.h"

namespace seer::server {

// Reads `tools`, `tool_choice` and `parallel_tool_calls` (400 naming the field). The
// ordered body keeps the parameter schemas' key order.
void read_tools(const nlohmann::ordered_json& body, std::vector<ToolFunction>* tools, ToolChoice* choice,
                bool* parallel);

// Reads an assistant message's `tool_calls` or a tool message's `tool_call_id`.
MessageToolInfo read_message_tool_info(const nlohmann::json& msg, const std::string& path, const std::string& role);

// The Hermes format's forcing grammar (the model's own format's is
// ToolFormat::forced_call_grammar): GBNF that admits only Hermes-format calls of `tools` (one, or one per line when
// `parallel`); for Named, only that function. Throws ApiError naming the schema part
// it cannot compile.
std::string tool_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                              grammar::JsonWhitespace ws = grammar::JsonWhitespace::Compact);

// The calls in `text`, in any of the formats above, to functions named in `tool_names`;
// nullopt when the text is not a tool call. *content gets the text before the first
// call (trimmed).
[[nodiscard]] std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text,
                                                                   const std::vector<std::string>& tool_names,
                                                                   std::string* content);

// What opens a call of those formats (a marker, or `{` as the reply's first byte).
CallOpenings legacy_call_openings();

}  // namespace seer::server
