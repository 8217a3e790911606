#pragma once
// Which JSON Schema keywords assert something. Every keyword seer does not list here
// is an annotation and ignored (title, description, examples, default, $id, $anchor,
// $schema, $comment, readOnly, deprecated, contentMediaType, vendor x-* keys, ...).
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace seer::grammar {

// Assertion keywords the compiler enforces (for some of them only some forms: their
// errors say which).
bool is_supported_assertion(const std::string& key);
// Why an assertion keyword cannot be enforced, or nullopt when `key` (with `value`)
// is supported or asserts nothing (uniqueItems false, then/else without if, ...).
std::optional<std::string> refusal(const nlohmann::ordered_json& schema, const std::string& key);

}  // namespace seer::grammar
