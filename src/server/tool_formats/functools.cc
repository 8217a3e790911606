// Phi-4-mini and FireFunction v2: functools[{"name": "f", "arguments": {...}}, ...]
// FireFunction's template shows the format; Phi-4-mini's lists the tools inside
// <|tool|>...<|/tool|> and leaves the format to the model.
#include "server/tool_formats/json_list_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class FunctoolsFormat : public JsonListFormat {
 public:
  FunctoolsFormat() : JsonListFormat("functools", "") {}
  std::string_view name() const override { return "functools"; }
  bool written_by(std::string_view source) const override {
    return source.find("functools[") != std::string_view::npos || source.find("<|/tool|>") != std::string_view::npos;
  }
};

}  // namespace

const ToolFormat& functools_tool_format() {
  static const FunctoolsFormat f;
  return f;
}

}  // namespace seer::server
