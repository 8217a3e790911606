#pragma once
// Tool calls of /v1/chat/completions: the request's `tools` / `tool_choice` /
// `parallel_tool_calls`, the grammar that forces a call (tool_choice "required" or a
// named function: the arguments follow the function's parameter schema, so they
// always parse), and the parsers that turn a model's text into OpenAI `tool_calls`
// for the formats of the common families (docs/structured-outputs.md):
//   Hermes / Qwen   <tool_call>{"name": ..., "arguments": {...}}</tool_call> (repeated)
//   Llama 3.x       {"name": ..., "parameters": {...}}, optionally after <|python_tag|>
//   Mistral         [TOOL_CALLS][{"name": ..., "arguments": {...}}, ...]
//                   or [TOOL_CALLS]name[ARGS]{...}
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_call_scanner.h"

namespace seer::server {

struct ToolFunction {
  std::string name;
  std::string description;
  nlohmann::ordered_json parameters;  // a JSON Schema; null when the tool gave none
};

enum class ToolChoiceMode { Auto, None, Required, Named };

struct ToolChoice {
  ToolChoiceMode mode = ToolChoiceMode::Auto;
  std::string name;  // Named
};

struct ToolCall {
  std::string id;  // "call_..."
  std::string name;
  std::string arguments;  // a JSON object as text
};

// An assistant message's calls or a tool message's reply, beside its ChatMessage.
struct MessageToolInfo {
  std::vector<ToolCall> tool_calls;  // role assistant
  std::string tool_call_id;          // role tool
};

// Reads `tools`, `tool_choice` and `parallel_tool_calls` (400 naming the field). The
// ordered body keeps the parameter schemas' key order.
void read_tools(const nlohmann::ordered_json& body, std::vector<ToolFunction>* tools, ToolChoice* choice,
                bool* parallel);

// Reads an assistant message's `tool_calls` or a tool message's `tool_call_id`.
MessageToolInfo read_message_tool_info(const nlohmann::json& msg, const std::string& path, const std::string& role);

// GBNF that admits only Hermes-format calls of `tools` (one, or one per line when
// `parallel`); for Named, only that function. Throws ApiError naming the schema part
// it cannot compile.
std::string tool_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                              grammar::JsonWhitespace ws = grammar::JsonWhitespace::Compact);

// The calls in `text`, in any of the formats above, to functions named in `tools`;
// nullopt when the text is not a tool call. *content gets the text before the first
// call (trimmed).
[[nodiscard]] std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text,
                                                                   const std::vector<std::string>& tool_names,
                                                                   std::string* content);

struct ToolStreamOutput {
  std::string content;               // safe to send as content now
  std::vector<ToolCallDelta> calls;  // tool-call deltas, in order
};

// Streaming: holds back text that may start a tool call and emits the rest as
// content; once a call begins, streams it as deltas (its name, then its arguments
// piece by piece; tool_call_scanner.h).
class ToolCallStream {
 public:
  explicit ToolCallStream(std::vector<std::string> tool_names) : names_(tool_names), scanner_(std::move(tool_names)) {}
  ToolStreamOutput push(std::string_view text);
  // At the end, when the whole reply parses as calls (*called): the deltas not sent
  // yet (calls or arguments the scanner could not stream). Otherwise *content gets
  // the text still held, sent as content.
  std::vector<ToolCallDelta> finish(std::string* content, bool* called);

 private:
  std::string content_part(std::string_view text);

  std::vector<std::string> names_;
  ToolCallScanner scanner_;
  std::string all_;       // every byte so far
  size_t emitted_ = 0;    // bytes of all_ sent as content
  bool in_call_ = false;  // a call began: everything from here on goes to the scanner
  size_t scanned_ = 0;    // bytes of all_ fed to the scanner
  bool text_ = false;     // the reply began as plain text
};

std::string new_tool_call_id();

}  // namespace seer::server
