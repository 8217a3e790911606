// Qwen3-Coder: each call a little XML document,
//   <tool_call>\n<function=f>\n<parameter=p>\nvalue\n</parameter>\n...</function>\n</tool_call>
// A value is raw text; it becomes a JSON value by the parameter's schema (a string
// value streams as it arrives, any other once it ends): a parameter
// whose `type` names integer, number, boolean, object, array or null is parsed as JSON
// (kept a string when it does not parse as one of them); any other is a string. A
// value ends at the first </parameter> followed (after spaces) by <parameter= or
// </function>, so a value may hold </parameter>, </function> and </tool_call> except
// in exactly that position, which the format cannot tell from the end of the value.
#include <fmt/format.h>

#include "grammar/json_schema_to_gbnf.h"
#include "server/json_fields.h"
#include "server/tool_formats/forced_grammar.h"
#include "server/tool_formats/registry.h"
#include "server/tool_formats/scanned_format.h"

namespace seer::server {
namespace {

using nlohmann::ordered_json;

constexpr std::string_view kCallOpen = "<tool_call>", kCallClose = "</tool_call>";
constexpr std::string_view kFunction = "<function=", kFunctionClose = "</function>";
constexpr std::string_view kParameter = "<parameter=", kParameterClose = "</parameter>";

bool declares_non_string(const ordered_json& schema, std::string_view json_type) {
  if (!schema.is_object() || !schema.contains("type")) return false;
  const ordered_json& t = schema["type"];
  auto names = [&](const ordered_json& v) {
    return v.is_string() && (v == json_type || (json_type == "number" && v == "integer") ||
                             (json_type == "integer" && v == "number"));
  };
  if (t.is_array()) return std::any_of(t.begin(), t.end(), names);
  return names(t);
}

const char* json_type_name(const ordered_json& v) {
  if (v.is_boolean()) return "boolean";
  if (v.is_number_integer() || v.is_number_unsigned()) return "integer";
  if (v.is_number()) return "number";
  if (v.is_object()) return "object";
  if (v.is_array()) return "array";
  if (v.is_null()) return "null";
  return "string";
}

ordered_json parameter_value(std::string_view raw, const ordered_json* schema) {
  if (schema) {
    auto v = parse_json_within_depth<ordered_json>(raw, kMaxJsonDepth);
    if (!v.is_discarded() && !v.is_string() && declares_non_string(*schema, json_type_name(v))) return v;
  }
  return std::string(raw);
}

const ordered_json* property_schema(const ToolFunction& tool, const std::string& name) {
  const ordered_json& p = tool.parameters;
  if (!p.is_object() || !p.contains("properties") || !p["properties"].is_object() || !p["properties"].contains(name))
    return nullptr;
  return &p["properties"][name];
}

struct ValueEnd {
  size_t end = kNotYet;  // where the value from s[v] ends (at its </parameter>), or kNotYet
  size_t settled = 0;    // while it has not: the text before this is surely the value's
};

ValueEnd value_end(std::string_view s, size_t v) {
  for (size_t k = s.find(kParameterClose, v); k != std::string_view::npos; k = s.find(kParameterClose, k + 1)) {
    const size_t after = skip_space(s, k + kParameterClose.size());
    if (after >= s.size()) return {kNotYet, k};
    const Match p = match_at(s, after, kParameter), f = match_at(s, after, kFunctionClose);
    if (p == Match::Yes || f == Match::Yes) return {k, k};
    if (p == Match::Partial || f == Match::Partial) return {kNotYet, k};
  }
  for (size_t k = std::max(v, s.size() - std::min(s.size(), kParameterClose.size() - 1)); k < s.size(); ++k)
    if (match_at(s, k, kParameterClose) == Match::Partial) return {kNotYet, k};
  return {kNotYet, s.size()};
}

// The format's newline after the opening tag and before the closing one are not the
// value's (of a value still arriving, a last newline may be the format's: held back).
std::string_view strip_newlines(std::string_view raw) {
  if (!raw.empty() && raw.front() == '\n') raw.remove_prefix(1);
  if (!raw.empty() && raw.back() == '\n') raw.remove_suffix(1);
  return raw;
}

bool always_string(const ordered_json* schema) {
  for (const char* t : {"integer", "number", "boolean", "object", "array", "null"})
    if (schema && declares_non_string(*schema, t)) return false;
  return true;
}

// One <function=...>...</function> from s[i]; returns past it, kNotYet, or sets *bad.
size_t scan_function(std::string_view s, size_t i, const std::vector<ToolFunction>& tools, CallScan* scan, bool* bad) {
  const size_t gt = s.find('>', i);
  if (gt == std::string_view::npos) return kNotYet;
  const ToolFunction* tool = find_tool(tools, s.substr(i, gt - i));
  if (!tool) return *bad = true, kNotYet;
  ScannedCall& call = scan->calls.emplace_back();
  call.name = tool->name;
  call.arguments = "{";
  for (i = gt + 1;;) {
    i = skip_space(s, i);
    if (const Match m = match_at(s, i, kFunctionClose); m != Match::No) {
      if (m == Match::Partial) return kNotYet;
      call.arguments += "}";
      call.complete = true;
      return i + kFunctionClose.size();
    }
    if (const Match m = match_at(s, i, kParameter); m != Match::Yes) return *bad = m == Match::No, kNotYet;
    const size_t name_end = s.find('>', i + kParameter.size());
    if (name_end == std::string_view::npos) return kNotYet;
    const std::string name(s.substr(i + kParameter.size(), name_end - i - kParameter.size()));
    const ordered_json* schema = property_schema(*tool, name);
    const ValueEnd end = value_end(s, name_end + 1);
    const std::string key = (call.arguments.size() > 1 ? "," : "") + model_json_text(ordered_json(name)) + ":";
    if (end.end == kNotYet) {
      // A string value streams as it settles: its JSON text without the closing quote.
      if (always_string(schema) && end.settled > name_end + 1) {
        const std::string text = model_json_text(std::string(strip_newlines(s.substr(name_end + 1, end.settled - name_end - 1))));
        call.arguments += key + text.substr(0, text.size() - 1);
      }
      return kNotYet;
    }
    std::string_view raw = strip_newlines(s.substr(name_end + 1, end.end - name_end - 1));
    call.arguments += key + model_json_text(parameter_value(raw, schema));
    i = end.end + kParameterClose.size();
  }
}

// Free text that never holds "</p" (so never the end of a parameter).
constexpr std::string_view kXmlTextRules =
    "xml-text ::= ( [^<] | \"<\"+ [^/<] | \"<\"+ \"/\" [^p<] )*\n"
    "xml-name ::= [A-Za-z0-9_.-]+\n";

bool plain_string(const ordered_json& schema) {
  return schema.is_object() && schema.value("type", ordered_json()) == "string" && !schema.contains("enum") &&
         !schema.contains("const");
}

bool string_enum(const ordered_json& schema) {
  if (!schema.is_object() || !schema.contains("enum") || !schema["enum"].is_array() || schema["enum"].empty()) return false;
  return std::all_of(schema["enum"].begin(), schema["enum"].end(), [](const ordered_json& v) { return v.is_string(); });
}

// The rule of one parameter's value text; helper rules go to *rules.
std::string value_rule(const ordered_json& schema, const ordered_json& root, const std::string& rule, size_t index,
                       std::string* rules) {
  if (plain_string(schema)) return "xml-text";
  if (string_enum(schema)) {
    std::string alts;
    for (const auto& v : schema["enum"]) alts += (alts.empty() ? "" : " | ") + grammar::gbnf_literal(v.get<std::string>());
    *rules += rule + " ::= " + alts + "\n";
    return rule;
  }
  *rules += parameter_rules(with_definitions(schema, root), rule, index);
  return rule;
}

std::string parameters_rule(const ForcedTool& f, std::string* rules) {
  const std::vector<NamedProperty> props = schema_properties(f.tool->parameters);
  if (props.empty())
    return "( " + grammar::gbnf_literal(std::string(kParameter)) + " xml-name " + grammar::gbnf_literal(">\n") +
           " xml-text " + grammar::gbnf_literal("\n</parameter>\n") + " )*";
  std::string seq;
  for (size_t k = 0; k < props.size(); ++k) {
    const std::string v = value_rule(*props[k].schema, f.tool->parameters, fmt::format("{}-p{}", f.args_rule, k), f.index, rules);
    seq += "( " + grammar::gbnf_literal(fmt::format("{}{}>\n", kParameter, props[k].name)) + " " + v + " " +
           grammar::gbnf_literal("\n</parameter>\n") + " )" + (props[k].required ? " " : "? ");
  }
  return seq;
}

class Qwen3CoderFormat : public ScannedFormat {
 public:
  std::string_view name() const override { return "qwen3_coder"; }
  bool written_by(std::string_view source) const override { return source.find(kFunction) != std::string_view::npos; }

  CallScan scan(std::string_view region, const std::vector<ToolFunction>& tools) const override {
    CallScan scan;
    for (size_t i = 0;;) {
      i = skip_space(region, i);
      if (const Match m = match_at(region, i, kCallOpen); m != Match::No) {
        if (m == Match::Partial) break;
        i = skip_space(region, i + kCallOpen.size());
      }
      const Match m = match_at(region, i, kFunction);
      if (m == Match::Partial) break;
      if (m == Match::No) {
        scan.malformed = scan.calls.empty();  // text after the calls is not read
        break;
      }
      bool bad = false;
      i = scan_function(region, i + kFunction.size(), tools, &scan, &bad);
      scan.malformed = bad;
      if (i == kNotYet) break;
      i = skip_space(region, i);
      if (const Match close = match_at(region, i, kCallClose); close != Match::No) {
        if (close == Match::Partial) break;
        i += kCallClose.size();
      }
    }
    return scan;
  }

  std::string forced_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                                  grammar::JsonWhitespace ws) const override {
    ForcedTools forced = forced_tools(tools, choice);  // compiles (and so checks) every schema
    std::string rules, alts;
    for (const ForcedTool& f : forced.tools)
      alts += (alts.empty() ? "" : " | ") + grammar::gbnf_literal(fmt::format("{}{}>\n", kFunction, f.tool->name)) + " " +
              parameters_rule(f, &rules);
    return root_rule("", "\n", "", parallel) + "call ::= " + grammar::gbnf_literal("<tool_call>\n") + " ( " + alts +
           " ) " + grammar::gbnf_literal("</function>\n</tool_call>") + "\n" + rules + std::string(kXmlTextRules) +
           grammar::json_common_gbnf(ws);
  }

 protected:
  CallOpenings own_openings() const override { return {{kCallOpen, kFunction}, ""}; }
};

}  // namespace

const ToolFormat& qwen3_coder_tool_format() {
  static const Qwen3CoderFormat f;
  return f;
}

}  // namespace seer::server
