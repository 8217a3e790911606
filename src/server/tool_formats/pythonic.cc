// Llama 3.2 (1B/3B) pythonic tool calling, and other templates that ask for calls as
// a Python list of function calls:
//   [get_weather(city="Paris", days=3), add(a=1, b=2)]
// Values are Python literals (strings in either quote, numbers, True / False / None,
// lists, tuples, dicts; JSON's true / false / null are read too) and become the JSON
// arguments object. The reply must be only the list.
#include <cctype>

#include <fmt/format.h>

#include "grammar/json_schema_to_gbnf.h"
#include "server/json_fields.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/python_literal.h"
#include "server/tool_formats/registry.h"
#include "server/tool_formats/scanned_format.h"

namespace seer::server {
namespace {

using nlohmann::ordered_json;

bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// Past the identifier at s[i] (i itself when there is none).
size_t ident_end(std::string_view s, size_t i, bool dashes) {
  while (i < s.size() && (ident_char(s[i]) || (dashes && (s[i] == '-' || s[i] == '.')))) ++i;
  return i;
}

// One f(a=1, ...) from s[i]; returns past it, kNotYet, or sets *bad.
size_t scan_call(std::string_view s, size_t i, const std::vector<ToolFunction>& tools, CallScan* scan, bool* bad) {
  const size_t open = ident_end(s, i, true);
  if (open >= s.size()) return kNotYet;
  const ToolFunction* tool = s[open] == '(' ? find_tool(tools, s.substr(i, open - i)) : nullptr;
  if (!tool) return *bad = true, kNotYet;
  ScannedCall& call = scan->calls.emplace_back();
  call.name = tool->name;
  call.arguments = "{";
  for (i = open + 1;;) {
    i = skip_space(s, i);
    if (i >= s.size()) return kNotYet;
    if (s[i] == ')') {
      call.arguments += "}";
      call.complete = true;
      return i + 1;
    }
    const size_t name_end = ident_end(s, i, false);
    const size_t eq = skip_space(s, name_end);
    if (eq >= s.size()) return kNotYet;
    if (name_end == i || s[eq] != '=') return *bad = true, kNotYet;
    ordered_json value;
    size_t j = eq + 1;
    const PyRead r = read_python_literal(s, &j, &value, kMaxJsonDepth);
    if (r != PyRead::Done) return *bad = r == PyRead::Bad, kNotYet;
    j = skip_space(s, j);
    if (j >= s.size()) return kNotYet;  // settled only once what follows shows the value ended
    if (s[j] != ',' && s[j] != ')') return *bad = true, kNotYet;
    call.arguments += (call.arguments.size() > 1 ? "," : "") + model_json_text(ordered_json(std::string(s.substr(i, name_end - i)))) +
                      ":" + model_json_text(value);
    i = s[j] == ',' ? j + 1 : j;
  }
}

class PythonicFormat : public ScannedFormat {
 public:
  std::string_view name() const override { return "pythonic"; }
  // The template shows a call like [func_name(param=...)].
  bool written_by(std::string_view source) const override {
    for (size_t b = source.find('['); b != std::string_view::npos; b = source.find('[', b + 1)) {
      const size_t open = ident_end(source, b + 1, false);
      if (open == b + 1 || open >= source.size() || source[open] != '(') continue;
      const size_t eq = ident_end(source, open + 1, false);
      if (eq > open + 1 && eq < source.size() && source[eq] == '=') return true;
    }
    return false;
  }

  CallScan scan(std::string_view region, const std::vector<ToolFunction>& tools) const override {
    CallScan scan;
    size_t i = skip_space(region, 0);
    if (i >= region.size()) return scan;
    if (region[i] != '[') return scan.malformed = true, scan;
    for (++i;;) {
      i = skip_space(region, i);
      if (i >= region.size()) return scan;
      bool bad = false;
      i = scan_call(region, i, tools, &scan, &bad);
      if (bad) scan.malformed = true;
      if (i == kNotYet) return scan;
      i = skip_space(region, i);
      if (i >= region.size()) return scan;
      if (region[i] == ']') {
        scan.malformed = skip_space(region, i + 1) < region.size();  // nothing may follow the list
        return scan;
      }
      if (region[i] != ',') return scan.malformed = true, scan;
      ++i;
    }
  }

  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    const ForcedTools forced = forced_tools(tools, choice);
    std::string rules, alts;
    for (const ForcedTool& f : forced.tools) {
      const std::vector<NamedProperty> props = schema_properties(f.tool->parameters);
      std::string args;
      if (props.empty()) {
        args = "( py-arg ( \", \" py-arg )* )?";
      } else {
        std::vector<std::pair<std::string, bool>> items;
        for (size_t k = 0; k < props.size(); ++k) {
          const std::string rule = fmt::format("{}-p{}", f.args_rule, k);
          rules += parameter_rules(with_definitions(*props[k].schema, f.tool->parameters), rule, f.index);
          items.push_back({grammar::gbnf_literal(props[k].name + "=") + " " + rule, props[k].required});
        }
        args = separated_sequence(items, ", ", f.args_rule + "-seq", &rules);
      }
      alts += (alts.empty() ? "" : " | ") + grammar::gbnf_literal(f.tool->name + "(") + " " + args + " \")\"";
    }
    return root_rule("[", ", ", "]", parallel) + "call ::= " + alts + "\n" + rules +
           "py-arg ::= [A-Za-z_] [A-Za-z0-9_]* \"=\" value\n" + grammar::json_common_gbnf(ws);
  }

 protected:
  CallOpenings own_openings() const override { return {{}, "["}; }
};

}  // namespace

const ToolFormat& pythonic_tool_format() {
  static const PythonicFormat f;
  return f;
}

}  // namespace seer::server
