#include "server/tool_formats/forced_grammar.h"

#include <fmt/format.h>

#include "common/error.h"
#include "grammar/json_schema_to_gbnf.h"
#include "server/api_error.h"

namespace seer::server {

using nlohmann::ordered_json;

std::string parameter_rules(const ordered_json& schema, const std::string& rule, size_t index) {
  if (schema.is_null()) return rule + " ::= value\n";
  try {
    return grammar::json_schema_rules(schema, rule);
  } catch (const Error& e) {
    bad_request(fmt::format("tools[{}].function.parameters", index), "tools[{}].function.parameters: {}", index,
                e.what());
  }
}

ForcedTools forced_tools(const std::vector<ToolFunction>& tools, const ToolChoice& choice) {
  ForcedTools out;
  for (size_t i = 0; i < tools.size(); ++i) {
    const ToolFunction& t = tools[i];
    if (choice.mode == ToolChoiceMode::Named && t.name != choice.name) continue;
    ForcedTool f{&t, i, fmt::format("args{}", i)};
    out.rules += t.parameters.is_null() ? f.args_rule + " ::= object\n" : parameter_rules(t.parameters, f.args_rule, i);
    out.tools.push_back(std::move(f));
  }
  return out;
}

std::string json_call_object(const ForcedTools& forced, std::string_view args_key) {
  std::string alts;
  const std::string key = fmt::format(", \"{}\": ", args_key);
  for (const ForcedTool& f : forced.tools)
    alts += (alts.empty() ? "" : " | ") + grammar::gbnf_literal(ordered_json(f.tool->name).dump()) + " " +
            grammar::gbnf_literal(key) + " " + f.args_rule;
  return grammar::gbnf_literal("{\"name\": ") + " ( " + alts + " ) " + grammar::gbnf_literal("}");
}

namespace {
std::string literal_or_empty(std::string_view s) { return s.empty() ? "" : grammar::gbnf_literal(std::string(s)) + " "; }
}  // namespace

std::string root_rule(std::string_view open, std::string_view sep, std::string_view close, bool parallel) {
  std::string repeat = parallel ? "( " + literal_or_empty(sep) + "call )* " : "";
  return "root ::= " + literal_or_empty(open) + "call " + repeat + literal_or_empty(close) + "\n";
}

std::vector<NamedProperty> schema_properties(const ordered_json& parameters) {
  std::vector<NamedProperty> out;
  if (!parameters.is_object() || !parameters.contains("properties") || !parameters["properties"].is_object()) return out;
  std::vector<std::string> required;
  if (parameters.contains("required") && parameters["required"].is_array())
    for (const auto& r : parameters["required"])
      if (r.is_string()) required.push_back(r);
  for (const auto& [name, schema] : parameters["properties"].items())
    out.push_back({name, &schema, std::find(required.begin(), required.end(), name) != required.end()});
  return out;
}

nlohmann::ordered_json with_definitions(const ordered_json& part, const ordered_json& root) {
  ordered_json out = part;
  if (!out.is_object() || !root.is_object()) return out;
  for (const char* k : {"$defs", "definitions"})
    if (root.contains(k) && !out.contains(k)) out[k] = root[k];
  return out;
}

std::string separated_sequence(const std::vector<std::pair<std::string, bool>>& items, std::string_view sep,
                               const std::string& prefix, std::string* rules) {
  // tail-k: items k.. each preceded by `sep` (an item already came); head-k: items k..
  // with none before. Both end with an empty tail-n / head-n.
  const std::string s = grammar::gbnf_literal(std::string(sep));
  const size_t n = items.size();
  *rules += fmt::format("{}-tail{} ::= \"\"\n{}-head{} ::= \"\"\n", prefix, n, prefix, n);
  for (size_t k = n; k-- > 0;) {
    const auto& [item, required] = items[k];
    const std::string tail = fmt::format("{}-tail{}", prefix, k + 1), head = fmt::format("{}-head{}", prefix, k + 1);
    *rules += fmt::format("{}-tail{} ::= ( {} {} ){} {}\n", prefix, k, s, item, required ? "" : "?", tail);
    *rules += fmt::format("{}-head{} ::= {} {}{}\n", prefix, k, item, tail, required ? "" : " | " + head);
  }
  return prefix + "-head0";
}

}  // namespace seer::server
