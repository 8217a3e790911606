// Nemotron Nano v2: <TOOLCALL>[{"name": "f", "arguments": {...}}, ...]</TOOLCALL>
#include "server/tool_formats/json_list_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class NemotronFormat : public JsonListFormat {
 public:
  NemotronFormat() : JsonListFormat("<TOOLCALL>", "</TOOLCALL>") {}
  std::string_view name() const override { return "nemotron"; }
  bool written_by(std::string_view source) const override { return source.find("<TOOLCALL>") != std::string_view::npos; }
};

}  // namespace

const ToolFormat& nemotron_tool_format() {
  static const NemotronFormat f;
  return f;
}

}  // namespace seer::server
