// Hermes / Qwen 2.5 / Qwen3 / Granite 4 / SmolLM3:
//   <tool_call>\n{"name": "f", "arguments": {...}}\n</tool_call>   (one block per call)
#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/legacy_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class HermesFormat : public LegacyJsonFormat {
 public:
  std::string_view name() const override { return "hermes"; }
  // GLM writes <tool_call>name<arg_key>..., not a JSON object.
  bool written_by(std::string_view source) const override {
    return source.find("<tool_call>") != std::string_view::npos && source.find("<arg_key>") == std::string_view::npos;
  }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    return root_rule("", "\n", "", parallel) + "call ::= " + grammar::gbnf_literal("<tool_call>\n") + " " +
           json_call_object(forced, "arguments") + " " + grammar::gbnf_literal("\n</tool_call>") + "\n" +
           forced.rules + grammar::json_common_gbnf(ws);
  }
};

}  // namespace

const ToolFormat& hermes_tool_format() {
  static const HermesFormat f;
  return f;
}

std::vector<std::string> tool_names(const std::vector<ToolFunction>& tools) {
  std::vector<std::string> names;
  for (const ToolFunction& t : tools) names.push_back(t.name);
  return names;
}

}  // namespace seer::server
