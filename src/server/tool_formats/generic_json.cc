// The fallback for a template that takes tools but shows no format seer knows: each
// call a bare JSON object, one per line,
//   {"name": "f", "arguments": {...}}
#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/legacy_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class GenericJsonFormat : public LegacyJsonFormat {
 public:
  std::string_view name() const override { return "generic_json"; }
  bool written_by(std::string_view) const override { return true; }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    return root_rule("", "\n", "", parallel) + "call ::= " + json_call_object(forced, "arguments") + "\n" +
           forced.rules + grammar::json_common_gbnf(ws);
  }
};

}  // namespace

const ToolFormat& generic_json_tool_format() {
  static const GenericJsonFormat f;
  return f;
}

}  // namespace seer::server
