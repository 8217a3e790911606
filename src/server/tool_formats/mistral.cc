// Mistral, in its two spellings:
//   [TOOL_CALLS][{"name": "f", "arguments": {...}}, ...]      Mistral Nemo and earlier
//   [TOOL_CALLS]f[ARGS]{...}[TOOL_CALLS]g[ARGS]{...}           Mistral Small 3.2, Devstral
#include "grammar/json_schema_to_gbnf.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/legacy_format.h"
#include "server/tool_formats/registry.h"

namespace seer::server {
namespace {

class MistralListFormat : public LegacyJsonFormat {
 public:
  std::string_view name() const override { return "mistral"; }
  bool written_by(std::string_view source) const override { return source.find("[TOOL_CALLS]") != std::string_view::npos; }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    return root_rule("[TOOL_CALLS][", ", ", "]", parallel) + "call ::= " + json_call_object(forced, "arguments") +
           "\n" + forced.rules + grammar::json_common_gbnf(ws);
  }
};

class MistralArgsFormat : public LegacyJsonFormat {
 public:
  std::string_view name() const override { return "mistral_args"; }
  bool written_by(std::string_view source) const override {
    return source.find("[TOOL_CALLS]") != std::string_view::npos && source.find("[ARGS]") != std::string_view::npos;
  }
  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    std::string alts;
    for (const ForcedTool& f : forced.tools)
      alts += (alts.empty() ? "" : " | ") + grammar::gbnf_literal(f.tool->name + "[ARGS]") + " " + f.args_rule;
    return root_rule("", "", "", parallel) + "call ::= " + grammar::gbnf_literal("[TOOL_CALLS]") + " ( " + alts +
           " )\n" + forced.rules + grammar::json_common_gbnf(ws);
  }
};

}  // namespace

const ToolFormat& mistral_tool_format() {
  static const MistralListFormat f;
  return f;
}

const ToolFormat& mistral_args_tool_format() {
  static const MistralArgsFormat f;
  return f;
}

}  // namespace seer::server
