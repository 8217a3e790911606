#pragma once
// The number, integer and string parts of a schema: the keywords that apply to one
// JSON type turned into that type's grammar (numbers: minimum, maximum,
// exclusiveMinimum, exclusiveMaximum, multipleOf; strings: minLength, maxLength,
// pattern, format). Errors name the schema's pointer and the keyword.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

// nullopt when no value of the type satisfies the keywords (minimum above maximum).
std::optional<std::string> integer_gbnf(RuleSet& rules, const nlohmann::ordered_json& s, const std::string& ptr);
std::optional<std::string> number_gbnf(RuleSet& rules, const nlohmann::ordered_json& s, const std::string& ptr);
std::optional<std::string> string_gbnf(RuleSet& rules, const nlohmann::ordered_json& s, const std::string& ptr);

// A count keyword (minLength, maxItems, ...): absent, or an integer in [0, kMaxCount].
std::optional<uint64_t> count_keyword(const nlohmann::ordered_json& s, const char* key, const std::string& ptr);

// seer::Error "<ptr>/<key>: <message>".
[[noreturn]] void keyword_error(const std::string& ptr, const std::string& key, const std::string& message);
std::string pointer_escape(const std::string& key);

}  // namespace seer::grammar
