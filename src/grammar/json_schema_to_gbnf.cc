#include "grammar/json_schema_to_gbnf.h"

#include <map>
#include <set>

#include "common/error.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;

// Whitespace between JSON tokens: bounded, so a model cannot pad forever. \u escapes
// exclude surrogates (an unpaired one is not valid text; characters beyond U+FFFF
// come as UTF-8), numbers have at most 16 digits a part and exponents two (they
// stay within a double).
constexpr const char* kCommonRules = R"(ws ::= [ \t\n]{0,20}
value ::= object | array | string | number | "true" | "false" | "null"
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

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

class Compiler {
 public:
  Compiler(const ordered_json& root, std::string name) : root_(root), name_(std::move(name)) {}

  std::string compile() {
    std::string body = expr(root_, "#");
    emit(name_, body);
    std::string out;
    for (const auto& [name, def] : rules_) out += name + " ::= " + def + "\n";
    return out;
  }

 private:
  template <typename... Args>
  [[noreturn]] static void error(const std::string& ptr, fmt::format_string<Args...> f, Args&&... args) {
    fail("{}: {}", ptr, fmt::format(f, std::forward<Args>(args)...));
  }

  void emit(const std::string& name, const std::string& def) { rules_.emplace_back(name, def); }

  std::string fresh(const std::string& hint) {
    std::string base;
    for (char c : hint) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
    if (base.size() > 40) base.resize(40);
    return name_ + "-" + base + "-" + std::to_string(counter_++);
  }

  // Counts the sub-schemas being compiled for as long as it lives.
  class Level {
   public:
    Level(int& depth, const std::string& ptr) : depth_(depth) {
      if (depth_ == kMaxSchemaDepth)
        error(ptr, "the schema nests deeper than {} levels (sub-schemas and $ref links; the schema depth limit)",
              kMaxSchemaDepth);
      ++depth_;
    }
    ~Level() { --depth_; }
    Level(const Level&) = delete;
    Level& operator=(const Level&) = delete;

   private:
    int& depth_;
  };

  // The GBNF expression matching `s` (located at pointer `ptr`).
  std::string expr(const ordered_json& s, const std::string& ptr) {
    const Level level(depth_, ptr);
    if (s.is_boolean()) {
      if (s.get<bool>()) return "value";
      error(ptr, "the schema 'false' matches nothing");
    }
    if (!s.is_object()) error(ptr, "a schema must be an object, not {}", s.type_name());
    static const std::set<std::string> kIgnored = {"description", "title", "$schema", "$id", "examples",
                                                   "default", "strict", "$comment"};
    static const std::set<std::string> kKnown = {"type", "properties", "required", "additionalProperties", "items",
                                                 "minItems", "maxItems", "enum", "const", "anyOf", "$defs",
                                                 "definitions", "$ref"};
    for (const auto& [k, v] : s.items())
      if (!kIgnored.count(k) && !kKnown.count(k))
        error(ptr + "/" + pointer_escape(k), "'{}' is not supported (docs/structured-outputs.md lists the subset)", k);
    if (s.contains("$ref")) return ref(s["$ref"], ptr + "/$ref");
    if (s.contains("const")) return literal_of(s["const"]);
    if (s.contains("enum")) {
      const ordered_json& e = s["enum"];
      if (!e.is_array() || e.empty()) error(ptr + "/enum", "'enum' must be a non-empty array");
      std::string alts;
      for (const auto& v : e) alts += (alts.empty() ? "" : " | ") + literal_of(v);
      return "( " + alts + " )";
    }
    if (s.contains("anyOf")) {
      const ordered_json& a = s["anyOf"];
      if (!a.is_array() || a.empty()) error(ptr + "/anyOf", "'anyOf' must be a non-empty array");
      std::string alts;
      for (size_t i = 0; i < a.size(); ++i)
        alts += (alts.empty() ? "" : " | ") + rule_for(a[i], ptr + "/anyOf/" + std::to_string(i), "any-of");
      return "( " + alts + " )";
    }
    if (!s.contains("type")) {
      if (s.contains("properties")) return object(s, ptr);
      if (s.contains("items")) return array(s, ptr);
      return "value";  // {}: any JSON value
    }
    const ordered_json& t = s["type"];
    if (t.is_string()) return typed(s, t.get<std::string>(), ptr);
    if (!t.is_array() || t.empty()) error(ptr + "/type", "'type' must be a string or a non-empty array of strings");
    std::string alts;
    for (size_t i = 0; i < t.size(); ++i) {
      if (!t[i].is_string()) error(ptr + "/type/" + std::to_string(i), "a type name must be a string");
      alts += (alts.empty() ? "" : " | ") + typed(s, t[i].get<std::string>(), ptr);
    }
    return "( " + alts + " )";
  }

  std::string typed(const ordered_json& s, const std::string& type, const std::string& ptr) {
    if (type == "object") return object(s, ptr);
    if (type == "array") return array(s, ptr);
    if (type == "string" || type == "number" || type == "integer" || type == "boolean" || type == "null") return type;
    error(ptr + "/type", "unknown type '{}'", type);
  }

  // A named rule for a sub-schema, so its expression is built once.
  std::string rule_for(const ordered_json& s, const std::string& ptr, const std::string& hint) {
    std::string e = expr(s, ptr);
    std::string name = fresh(hint);
    emit(name, e);
    return name;
  }

  std::string ref(const ordered_json& r, const std::string& ptr) {
    if (!r.is_string()) error(ptr, "'$ref' must be a string");
    const std::string target = r.get<std::string>();
    if (auto it = ref_rules_.find(target); it != ref_rules_.end()) return it->second;
    const ordered_json* node = nullptr;
    if (target == "#") {
      node = &root_;
    } else {
      for (const char* prefix : {"#/$defs/", "#/definitions/"}) {
        const std::string p = prefix;
        if (target.rfind(p, 0) != 0) continue;
        const std::string key = p.substr(2, p.size() - 3);
        const std::string name = target.substr(p.size());
        if (root_.contains(key) && root_[key].is_object() && root_[key].contains(name)) node = &root_[key][name];
      }
    }
    if (!node) error(ptr, "'$ref' '{}' does not name a schema in #/$defs or #/definitions", target);
    std::string name = fresh("ref-" + target.substr(target.rfind('/') + 1));
    ref_rules_[target] = name;  // before compiling: recursion refers to the name
    emit(name, expr(*node, target));
    return name;
  }

  std::string object(const ordered_json& s, const std::string& ptr) {
    if (s.contains("additionalProperties")) {
      const ordered_json& ap = s["additionalProperties"];
      if (!(ap.is_boolean() && !ap.get<bool>()))
        error(ptr + "/additionalProperties", "only 'additionalProperties': false is supported");
    }
    std::vector<std::pair<std::string, std::string>> props;  // key literal, value rule
    std::set<std::string> required;
    if (s.contains("required")) {
      const ordered_json& r = s["required"];
      if (!r.is_array()) error(ptr + "/required", "'required' must be an array of property names");
      for (size_t i = 0; i < r.size(); ++i) {
        if (!r[i].is_string()) error(ptr + "/required/" + std::to_string(i), "a required name must be a string");
        required.insert(r[i].get<std::string>());
      }
    }
    if (s.contains("properties")) {
      const ordered_json& p = s["properties"];
      if (!p.is_object()) error(ptr + "/properties", "'properties' must be an object");
      for (const auto& [k, v] : p.items()) {
        const std::string pp = ptr + "/properties/" + pointer_escape(k);
        props.emplace_back(k, rule_for(v, pp, "prop-" + k));
      }
    } else if (!s.contains("additionalProperties")) {
      return "object";  // {"type": "object"} alone: any object
    }
    std::set<std::string> names;
    for (const auto& p : props) names.insert(p.first);
    for (const std::string& r : required)
      if (!names.count(r)) error(ptr + "/required", "required property '{}' is not in 'properties'", r);
    // first[i]: members i.. when none was written yet; rest[i]: after one was (each
    // starts with a comma). Optional members may be skipped.
    const size_t n = props.size();
    std::vector<std::string> first(n + 1), rest(n + 1);
    for (size_t i = 0; i <= n; ++i) {
      first[i] = fresh("obj-first");
      rest[i] = fresh("obj-rest");
    }
    for (size_t i = n + 1; i-- > 0;) {
      if (i == n) {
        emit(first[i], "\"\"");
        emit(rest[i], "\"\"");
        continue;
      }
      const std::string kv = gbnf_literal(ordered_json(props[i].first).dump()) + " ws \":\" ws " + props[i].second + " ws";
      const bool req = required.count(props[i].first) > 0;
      emit(first[i], kv + " " + rest[i + 1] + (req ? "" : " | " + first[i + 1]));
      emit(rest[i], "\",\" ws " + kv + " " + rest[i + 1] + (req ? "" : " | " + rest[i + 1]));
    }
    return "\"{\" ws " + first[0] + " \"}\"";
  }

  std::string array(const ordered_json& s, const std::string& ptr) {
    std::string item = "value";
    if (s.contains("items")) item = rule_for(s["items"], ptr + "/items", "item");
    auto bound = [&](const char* k) -> long {
      if (!s.contains(k)) return -1;
      const ordered_json& v = s[k];
      if (!v.is_number_integer() || v.get<long>() < 0 || v.get<long>() > 1000)
        error(ptr + "/" + k, "'{}' must be an integer in [0, 1000]", k);
      return v.get<long>();
    };
    const long min = std::max(0L, bound("minItems"));
    const long max = bound("maxItems");
    if (max >= 0 && max < min) error(ptr + "/maxItems", "'maxItems' is below 'minItems'");
    if (max == 0) return "\"[\" ws \"]\"";
    const std::string more = "( \",\" ws " + item + " ws )";
    const long more_min = std::max(0L, min - 1);
    std::string reps = max < 0 ? fmt::format("{}{{{},}}", more, more_min) : fmt::format("{}{{{},{}}}", more, more_min, max - 1);
    std::string body = item + " ws " + reps;
    return "\"[\" ws " + (min >= 1 ? body : "( " + body + " )?") + " \"]\"";
  }

  static std::string literal_of(const ordered_json& v) { return gbnf_literal(v.dump()); }

  const ordered_json& root_;
  const std::string name_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> ref_rules_;
  int counter_ = 0;
  int depth_ = 0;  // sub-schemas being compiled (Level)
};

}  // namespace

std::string gbnf_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) out += fmt::format("\\x{:02X}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

std::string json_schema_rules(const ordered_json& schema, const std::string& rule) {
  return Compiler(schema, rule).compile();
}

std::string json_schema_to_gbnf(const ordered_json& schema) { return json_schema_rules(schema, "root") + kCommonRules; }

std::string json_object_gbnf() { return std::string("root ::= object\n") + kCommonRules; }

std::string json_common_gbnf() { return kCommonRules; }

}  // namespace seer::grammar
