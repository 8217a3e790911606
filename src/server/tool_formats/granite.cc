// Granite 3.x: <|tool_call|>[{"name": "f", "arguments": {...}}, ...]
#include "server/tool_formats/json_list_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class GraniteFormat : public JsonListFormat {
 public:
  GraniteFormat() : JsonListFormat("<|tool_call|>", "") {}
  std::string_view name() const override { return "granite"; }
  bool written_by(std::string_view source) const override { return source.find("<|tool_call|>") != std::string_view::npos; }
};

}  // namespace

const ToolFormat& granite_tool_format() {
  static const GraniteFormat f;
  return f;
}

}  // namespace seer::server
