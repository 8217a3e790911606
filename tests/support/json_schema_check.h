#pragma once
// A validator for the JSON Schema subset seer compiles to grammars
// (src/grammar/json_schema_to_gbnf.h), written independently of the compiler so the
// property tests check its output against the schema, not against itself.
#include <string>

#include <nlohmann/json.hpp>

namespace seer::testing {

// "" when `v` satisfies `schema` (whose $defs / $ref resolve against `root`),
// otherwise where and why not.
inline std::string schema_violation(const nlohmann::json& v, const nlohmann::json& schema, const nlohmann::json& root,
                                    const std::string& at = "$") {
  using nlohmann::json;
  if (schema.is_boolean()) return schema.get<bool>() ? "" : at + ": schema false";
  if (schema.contains("$ref")) {
    std::string ref = schema["$ref"];
    if (ref == "#") return schema_violation(v, root, root, at);
    auto slash = ref.rfind('/');
    std::string group = ref.substr(2, slash - 2), name = ref.substr(slash + 1);
    return schema_violation(v, root[group][name], root, at);
  }
  if (schema.contains("const") && v != schema["const"]) return at + ": not the const";
  if (schema.contains("enum")) {
    bool found = false;
    for (const auto& e : schema["enum"]) found = found || e == v;
    if (!found) return at + ": not in enum";
  }
  if (schema.contains("anyOf")) {
    for (const auto& s : schema["anyOf"])
      if (schema_violation(v, s, root, at).empty()) return "";
    return at + ": matches no anyOf branch";
  }
  if (schema.contains("type")) {
    json types = schema["type"].is_array() ? schema["type"] : json::array({schema["type"]});
    bool ok = false;
    for (const auto& t : types) {
      const std::string n = t;
      ok = ok || (n == "object" && v.is_object()) || (n == "array" && v.is_array()) || (n == "string" && v.is_string()) ||
           (n == "number" && v.is_number()) || (n == "integer" && v.is_number_integer()) ||
           (n == "boolean" && v.is_boolean()) || (n == "null" && v.is_null());
    }
    if (!ok) return at + ": wrong type " + v.type_name();
  }
  if (v.is_object() && schema.contains("properties")) {
    const json& props = schema["properties"];
    for (const auto& r : schema.value("required", json::array()))
      if (!v.contains(r.get<std::string>())) return at + ": missing " + r.get<std::string>();
    for (const auto& [k, val] : v.items()) {
      if (!props.contains(k)) return at + ": extra key " + k;
      std::string e = schema_violation(val, props[k], root, at + "." + k);
      if (!e.empty()) return e;
    }
  }
  if (v.is_array()) {
    if (schema.contains("minItems") && v.size() < schema["minItems"].get<size_t>()) return at + ": too few items";
    if (schema.contains("maxItems") && v.size() > schema["maxItems"].get<size_t>()) return at + ": too many items";
    if (schema.contains("items"))
      for (size_t i = 0; i < v.size(); ++i) {
        std::string e = schema_violation(v[i], schema["items"], root, at + "[" + std::to_string(i) + "]");
        if (!e.empty()) return e;
      }
  }
  return "";
}

}  // namespace seer::testing
