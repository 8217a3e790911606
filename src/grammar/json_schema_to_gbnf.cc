#include "grammar/json_schema_to_gbnf.h"

#include "common/error.h"
#include "grammar/grammar_check.h"
#include "grammar/json_schema_compiler.h"
#include "grammar/json_schema_keywords.h"
#include "grammar/json_schema_scalars.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;

// \u escapes exclude surrogates (an unpaired one is not valid text; characters beyond
// U+FFFF come as UTF-8); numbers have at most 16 digits a part and exponents two
// (they stay within a double).
constexpr const char* kCommonRules = R"(value ::= object | array | string | number | "true" | "false" | "null"
object ::= "{" ws ( string ws ":" ws value ws ( "," ws string ws ":" ws value ws )* )? "}"
array ::= "[" ws ( value ws ( "," ws value ws )* )? "]"
string ::= "\"" char* "\""
char ::= [^"\\\x00-\x1F] | "\\" ( ["\\/bfnrt] | "u" unicode-escape )
unicode-escape ::= [0-9a-cA-CeEfF] [0-9a-fA-F]{3} | [dD] [0-7] [0-9a-fA-F]{2}
integer ::= "-"? ( "0" | [1-9] [0-9]{0,15} )
number ::= integer ( "." [0-9]{1,16} )? ( [eE] [-+]? [0-9]{1,2} )?
boolean ::= "true" | "false"
null ::= "null"
)";

const char* ws_rule(JsonWhitespace ws) {
  return ws == JsonWhitespace::Flexible ? "ws ::= [ \\t\\n]{0,20}\n" : "ws ::= \"\"\n";
}

}  // namespace

// Counts the sub-schemas being compiled for as long as it lives.
class Level {
 public:
  Level(int& depth, const std::string& ptr) : depth_(depth) {
    if (depth_ == kMaxSchemaDepth)
      fail("{}: the schema nests deeper than {} levels (sub-schemas and $ref links; the schema depth limit)", ptr,
           kMaxSchemaDepth);
    ++depth_;
  }
  ~Level() { --depth_; }
  Level(const Level&) = delete;
  Level& operator=(const Level&) = delete;

 private:
  int& depth_;
};

std::string SchemaCompiler::compile() {
  auto body = expr(root_, "#");
  if (!body) fail("#: no value satisfies the schema");
  rules_.emit(rules_.prefix(), *body);
  return rules_.text();
}

std::optional<std::string> SchemaCompiler::rule_for(const json& s, const std::string& ptr, const std::string& hint) {
  auto e = expr(s, ptr);
  if (!e) return std::nullopt;
  if (e->find(' ') == std::string::npos) return e;  // a rule name already
  return rules_.rule(hint, *e);
}

const SchemaCompiler::json& SchemaCompiler::resolve(const json& r, const std::string& ptr) const {
  if (!r.is_string()) fail("{}: '$ref' must be a string", ptr);
  const std::string target = r.get<std::string>();
  if (target == "#") return root_;
  if (target.rfind("#/", 0) == 0) {
    std::string pointer;  // the fragment is URI-encoded: %25 is '%'
    for (size_t i = 1; i < target.size(); ++i) {
      if (target[i] == '%' && i + 2 < target.size() && std::isxdigit(static_cast<unsigned char>(target[i + 1])) &&
          std::isxdigit(static_cast<unsigned char>(target[i + 2]))) {
        pointer += static_cast<char>(std::stoi(target.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        pointer += target[i];
      }
    }
    try {
      const nlohmann::json_pointer<std::string> p(pointer);
      if (root_.contains(p)) return root_.at(p);
    } catch (const nlohmann::json::exception&) {
    }
  }
  fail("{}: '$ref' '{}' does not name a schema in this document (only '#' and '#/...' JSON pointers are supported)",
       ptr, target);
}

std::optional<std::string> SchemaCompiler::ref_rule(const json& s, const std::string& ptr) {
  const std::string target = s["$ref"].get<std::string>();
  if (auto it = ref_rules_.find(target); it != ref_rules_.end()) return it->second;
  const json& node = resolve(s["$ref"], ptr + "/$ref");
  const std::string name = rules_.fresh("ref-" + target.substr(target.rfind('/') + 1));
  ref_rules_[target] = name;  // before compiling: recursion refers to the name
  auto e = expr(node, target);
  rules_.emit(name, e ? *e : "[^\\x00-\\U0010FFFF]");  // a schema matching nothing: no character starts it
  return name;
}

std::optional<std::string> SchemaCompiler::expr(const json& s, const std::string& ptr) {
  const Level level(depth_, ptr);
  if (s.is_boolean()) return s.get<bool>() ? std::optional<std::string>("value") : std::nullopt;
  if (!s.is_object()) fail("{}: a schema must be an object or a boolean, not {}", ptr, s.type_name());
  for (const auto& [k, v] : s.items())
    if (auto why = refusal(s, k)) keyword_error(ptr, k, *why);
  if (s.contains("allOf")) return expr(merged_all_of(s, ptr, *this), ptr);
  if (s.contains("$ref")) {
    json rest = s;
    rest.erase("$ref");
    if (has_assertions(rest)) return expr(merged_all_of(s, ptr, *this), ptr);
    return ref_rule(s, ptr);
  }
  if (s.contains("anyOf") || s.contains("oneOf")) return alternatives(s, ptr);
  if (s.contains("const") || s.contains("enum")) return literals(s, ptr);
  std::vector<std::string> types = {"null", "boolean", "object", "array", "number", "string"};
  if (auto t = s.find("type"); t != s.end()) {
    types.clear();
    if (t->is_string()) types.push_back(t->get<std::string>());
    else if (!t->is_array() || t->empty()) keyword_error(ptr, "type", "'type' must be a string or a non-empty array of strings");
    else
      for (size_t i = 0; i < t->size(); ++i) {
        if (!(*t)[i].is_string()) keyword_error(ptr, "type/" + std::to_string(i), "a type name must be a string");
        types.push_back((*t)[i].get<std::string>());
      }
    const bool number = std::find(types.begin(), types.end(), "number") != types.end();
    if (number) std::erase(types, std::string("integer"));  // integers are numbers
  } else if (!has_assertions(s)) {
    return "value";
  }
  std::string alts;
  for (const std::string& type : types)
    if (auto e = typed(s, type, ptr)) alts += (alts.empty() ? "" : " | ") + *e;
  if (alts.empty()) return std::nullopt;
  return "( " + alts + " )";
}

std::optional<std::string> SchemaCompiler::typed(const json& s, const std::string& type, const std::string& ptr) {
  if (type == "object") return object(s, ptr);
  if (type == "array") return array(s, ptr);
  if (type == "string") return string_gbnf(rules_, s, ptr);
  if (type == "number") return number_gbnf(rules_, s, ptr);
  if (type == "integer") return integer_gbnf(rules_, s, ptr);
  if (type == "boolean" || type == "null") return type;
  keyword_error(ptr, "type", fmt::format("unknown type '{}'", type));
}

std::optional<std::string> SchemaCompiler::alternatives(const json& s, const std::string& ptr) {
  const char* key = s.contains("anyOf") ? "anyOf" : "oneOf";
  if (s.contains("anyOf") && s.contains("oneOf")) keyword_error(ptr, "oneOf", "'oneOf' beside 'anyOf' is not supported");
  const json& a = s[key];
  if (!a.is_array() || a.empty()) keyword_error(ptr, key, fmt::format("'{}' must be a non-empty array", key));
  // Keywords beside the alternatives apply to each of them: merge them into each branch.
  json rest = s;
  rest.erase(key);
  const bool distribute = has_assertions(rest);
  json branches = json::array();
  for (size_t i = 0; i < a.size(); ++i) {
    const std::string bp = ptr + "/" + key + "/" + std::to_string(i);
    if (!distribute) {
      branches.push_back(a[i]);
      continue;
    }
    json both = rest;
    both["allOf"] = json::array({a[i]});
    branches.push_back(merged_all_of(both, bp, *this));
  }
  if (std::string(key) == "oneOf" && a.size() > 1 && !branches_exclude_each_other(branches))
    keyword_error(ptr, key, "'oneOf' is supported only when its branches provably exclude each other (different types, "
                            "const/enum values, or a required property with different const values); use 'anyOf'");
  std::string alts;
  for (size_t i = 0; i < branches.size(); ++i)
    if (auto r = rule_for(branches[i], ptr + "/" + key + "/" + std::to_string(i), "alt"))
      alts += (alts.empty() ? "" : " | ") + *r;
  if (alts.empty()) return std::nullopt;
  return "( " + alts + " )";
}

// const / enum: the values that also satisfy the keywords beside them.
std::optional<std::string> SchemaCompiler::literals(const json& s, const std::string& ptr) {
  json values = json::array();
  if (s.contains("const")) values.push_back(s["const"]);
  if (s.contains("enum")) {
    const json& e = s["enum"];
    if (!e.is_array()) keyword_error(ptr, "enum", "'enum' must be an array");
    json kept = json::array();
    for (const json& v : e)
      if (!s.contains("const") || v == s["const"]) kept.push_back(v);
    values = kept;
  }
  json rest = s;
  rest.erase("const");
  rest.erase("enum");
  std::optional<GrammarChecker> check;
  if (has_assertions(rest)) {
    try {
      check.emplace(GrammarChecker::from_schema(rest));
    } catch (const Error& e) {
      keyword_error(ptr, s.contains("enum") ? "enum" : "const",
                    fmt::format("the keywords beside it must compile on their own: {}", e.what()));
    }
  }
  std::string alts;
  for (const json& v : values) {
    const std::string text = v.dump();
    if (check && !check->accepts(text)) continue;
    alts += (alts.empty() ? "" : " | ") + gbnf_literal(text);
  }
  if (alts.empty()) return std::nullopt;
  return "( " + alts + " )";
}

std::string json_schema_rules(const ordered_json& schema, const std::string& rule) {
  return SchemaCompiler(schema, rule).compile();
}

std::string json_schema_to_gbnf(const ordered_json& schema, JsonWhitespace ws) {
  return json_schema_rules(schema, "root") + kCommonRules + ws_rule(ws);
}

std::string json_object_gbnf(JsonWhitespace ws) { return std::string("root ::= object\n") + kCommonRules + ws_rule(ws); }

std::string json_common_gbnf(JsonWhitespace ws) { return std::string(kCommonRules) + ws_rule(ws); }

}  // namespace seer::grammar
