#pragma once
// JSON Schema -> GBNF (docs/structured-outputs.md lists what compiles). Each JSON type
// a schema allows (its `type`, or every type) gets the grammar of the keywords that
// apply to it: numbers and integers their bounds and multipleOf (digit-range
// grammars), strings their lengths, pattern and format, arrays prefixItems / items /
// minItems / maxItems (counted repetition in rules logarithmic in the count), objects
// properties / required / additionalProperties / min- and maxProperties /
// propertyNames; enum and const; anyOf, oneOf when its branches provably exclude each
// other, allOf merged, $ref (recursion allowed, sibling keywords merged), $defs and
// definitions, draft-04..2020-12 spellings. Keywords that assert nothing are ignored;
// an assertion seer cannot enforce is refused naming its JSON pointer, so whatever
// compiles is enforced. Properties come out in the schema's key order (ordered_json
// keeps the client's order), other keys after them.
#include <string>

#include <nlohmann/json.hpp>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

// Sub-schemas nested in one another, each `$ref` followed counting as one level
// (the compiler walks them by recursion; docs/security.md). A `$ref` to a schema
// already being compiled (recursion) is a rule reference, not a level.
constexpr int kMaxSchemaDepth = 64;

// Compact JSON (no space anywhere outside strings: what JSON.stringify and
// nlohmann::json::dump() write) is the default; flexible allows up to 20 characters of
// whitespace between tokens.
enum class JsonWhitespace { Compact, Flexible };

// Throws seer::Error "<pointer>: <problem>", e.g. "#/properties/tags/uniqueItems:
// 'uniqueItems' is not supported ...", or "#/$defs/d63: the schema nests deeper than
// 64 levels ...". The grammar's start symbol is `root`.
[[nodiscard]] std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema,
                                              JsonWhitespace ws = JsonWhitespace::Compact);

// The rules of `schema` alone, defining rule `rule` (every helper rule's name starts
// with it), for grammars that combine several schemas; they use json_common_gbnf().
[[nodiscard]] std::string json_schema_rules(const nlohmann::ordered_json& schema, const std::string& rule);

// Any JSON object (response_format {"type": "json_object"}).
std::string json_object_gbnf(JsonWhitespace ws = JsonWhitespace::Compact);

// The rules every generated grammar shares (value, object, array, string, char,
// number, integer, ws), for grammars that embed JSON in other text (tool calls).
std::string json_common_gbnf(JsonWhitespace ws = JsonWhitespace::Compact);

}  // namespace seer::grammar
