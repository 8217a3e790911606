#pragma once
// The values tool calling passes around: the offered functions, the client's
// tool_choice, a parsed call and a streamed call's delta (tool_calls.h reads them
// from requests; tool_formats/ reads them from a model's text).
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

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

// One streamed piece of a call, in the OpenAI delta shape: a first delta with index,
// id and name; then fragments of the arguments object's text.
struct ToolCallDelta {
  int32_t index = 0;
  std::string id;
  std::string name;
  std::string arguments;
};

struct ToolStreamOutput {
  std::string content;               // safe to send as content now
  std::vector<ToolCallDelta> calls;  // tool-call deltas, in order
};

std::string new_tool_call_id();

}  // namespace seer::server
