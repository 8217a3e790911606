// Llama 3.1 / 3.2 / 3.3 (JSON tool calling): the reply is the call,
//   {"name": "f", "parameters": {...}}   (optionally after <|python_tag|>)
// Their templates render one call per assistant turn, so a forced call is one call.
#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/legacy_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class LlamaJsonFormat : public LegacyJsonFormat {
 public:
  std::string_view name() const override { return "llama3_json"; }
  bool written_by(std::string_view source) const override {
    return source.find("<|python_tag|>") != std::string_view::npos ||
           (source.find("<|eot_id|>") != std::string_view::npos && source.find("\"parameters\"") != std::string_view::npos);
  }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    return root_rule("", "", "", false) + "call ::= " + json_call_object(forced, "parameters") + "\n" + forced.rules +
           grammar::json_common_gbnf(ws);
  }
};

}  // namespace

const ToolFormat& llama_json_tool_format() {
  static const LlamaJsonFormat f;
  return f;
}

}  // namespace seer::server
