#pragma once
// The formats seer read first (Hermes / Qwen, Llama 3.x JSON, Mistral, and the generic
// JSON object) share one reader: the reply is parsed by parse_tool_calls and streamed
// by ToolCallScanner whichever of them the model writes; they differ in the
// templates they belong to and the grammar that forces a call.
#include <memory>

#include "server/tool_calls.h"
#include "server/tool_formats/tool_format.h"

namespace seer::server {

std::vector<std::string> tool_names(const std::vector<ToolFunction>& tools);

class LegacyJsonFormat : public ToolFormat {
 public:
  CallOpenings openings() const override { return legacy_call_openings(); }
  std::optional<std::vector<ToolCall>> parse(std::string_view text, const std::vector<ToolFunction>& tools,
                                             std::string* content) const override {
    return parse_tool_calls(text, tool_names(tools), content);
  }
  std::unique_ptr<CallRegionScanner> scanner(const std::vector<ToolFunction>& tools) const override {
    return std::make_unique<ToolCallScanner>(tool_names(tools));
  }
};

}  // namespace seer::server
