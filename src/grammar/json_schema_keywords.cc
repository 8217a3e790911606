#include "grammar/json_schema_keywords.h"

#include <set>

#include <fmt/format.h>

namespace seer::grammar {

bool is_supported_assertion(const std::string& key) {
  static const std::set<std::string> kSupported = {
      "type", "enum", "const", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf",
      "minLength", "maxLength", "pattern", "format", "items", "prefixItems", "additionalItems", "minItems",
      "maxItems", "properties", "required", "additionalProperties", "minProperties", "maxProperties",
      "propertyNames", "patternProperties", "allOf", "anyOf", "oneOf", "$ref", "dependentRequired",
      "dependencies"};
  return kSupported.count(key) > 0;
}

std::optional<std::string> refusal(const nlohmann::ordered_json& s, const std::string& key) {
  const auto& v = s[key];
  if (key == "uniqueItems") {
    if (v == false) return std::nullopt;
    return "'uniqueItems' is not supported (a grammar cannot compare array items)";
  }
  if (key == "if") return "'if'/'then'/'else' is not supported";
  if (key == "not") return "'not' is not supported (a grammar cannot complement a schema)";
  if (key == "dependentSchemas") return "'dependentSchemas' is not supported";
  if (key == "contains" || key == "minContains" || key == "maxContains") {
    if (key != "contains" && !s.contains("contains")) return std::nullopt;
    return fmt::format("'{}' is not supported", key);
  }
  if (key == "unevaluatedItems" || key == "unevaluatedProperties" || key == "$dynamicRef" || key == "$recursiveRef")
    return fmt::format("'{}' is not supported", key);
  return std::nullopt;
}

}  // namespace seer::grammar
