#pragma once
// JSON Schema -> GBNF for the subset OpenAI's strict structured outputs accept:
// type (object, array, string, number, integer, boolean, null, or a list of them),
// properties / required / additionalProperties (false or absent: no other keys),
// items / minItems / maxItems, enum, const, anyOf, $defs / definitions with $ref
// ("#", "#/$defs/NAME", "#/definitions/NAME"; recursion allowed), and {} for any value.
// Annotations (description, title, $schema, $id, examples, default, strict) are
// ignored; any other keyword is refused naming its JSON pointer, so a constraint the
// grammar would not enforce is never silently dropped. Properties come out in the
// order of the schema object's keys (ordered_json keeps the client's order); the text
// between tokens is compact JSON with
// optional bounded whitespace.
#include <string>

#include <nlohmann/json.hpp>

namespace seer::grammar {

// Sub-schemas nested in one another, each `$ref` followed counting as one level
// (the compiler walks them by recursion; docs/security.md). A `$ref` to a schema
// already being compiled (recursion) is a rule reference, not a level.
constexpr int kMaxSchemaDepth = 64;

// Throws seer::Error "<pointer>: <problem>", e.g. "#/properties/age: 'minimum' is not
// supported", or "#/$defs/d63: the schema nests deeper than 64 levels ...". The
// grammar's start symbol is `root`.
[[nodiscard]] std::string json_schema_to_gbnf(const nlohmann::ordered_json& schema);

// The rules of `schema` alone, defining rule `rule` (every helper rule's name starts
// with it), for grammars that combine several schemas; they use json_common_gbnf().
[[nodiscard]] std::string json_schema_rules(const nlohmann::ordered_json& schema, const std::string& rule);

// Any JSON object (response_format {"type": "json_object"}).
std::string json_object_gbnf();

// The rules every generated grammar shares (value, object, array, string, number,
// integer, ws), for grammars that embed JSON in other text (tool calls).
std::string json_common_gbnf();

// `s` as a GBNF string literal (with quotes), escaping what GBNF needs.
std::string gbnf_literal(const std::string& s);

}  // namespace seer::grammar
