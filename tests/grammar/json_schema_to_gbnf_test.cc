#include "grammar/json_schema_to_gbnf.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_test_util.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;
using testing::matches;

Grammar compile(const char* schema) { return parse_gbnf(json_schema_to_gbnf(ordered_json::parse(schema))); }
Grammar compile_flexible(const char* schema) {
  return parse_gbnf(json_schema_to_gbnf(ordered_json::parse(schema), JsonWhitespace::Flexible));
}

TEST(JsonSchemaToGbnf, ObjectWithRequiredAndOptionalProperties) {
  Grammar g = compile(R"({"type": "object", "properties": {"name": {"type": "string"}, "age": {"type": "integer"},
                         "tags": {"type": "array", "items": {"type": "string"}}},
                         "required": ["name"], "additionalProperties": false})");
  EXPECT_TRUE(matches(g, R"({"name":"x"})"));
  EXPECT_TRUE(matches(g, R"({"name":"x","age":-12,"tags":["a","b"]})"));
  EXPECT_TRUE(matches(g, R"({"name":"x","tags":[]})"));
  EXPECT_TRUE(matches(g, "{\"name\":\"a\\\"b\\u00e9\"}"));
  EXPECT_FALSE(matches(g, R"({"name": "x"})"));  // compact by default: no insignificant whitespace
  EXPECT_FALSE(matches(g, "{\n\"name\":\"x\"}"));
  EXPECT_FALSE(matches(g, R"({"age":1})"));               // name is required
  EXPECT_FALSE(matches(g, R"({"name":"x","other":1})"));  // no extra keys
  EXPECT_FALSE(matches(g, R"({"name":"x","age":1.5})"));  // integer
  EXPECT_FALSE(matches(g, R"({"age":1,"name":"x"})"));    // properties in schema order
  EXPECT_FALSE(matches(g, R"({"name":"x",})"));
}

TEST(JsonSchemaToGbnf, EnumsConstNumbersBooleansNull) {
  Grammar g = compile(R"({"type": "object", "properties": {
      "color": {"enum": ["red", "green", 3, null]}, "kind": {"const": "fixed"},
      "x": {"type": "number"}, "ok": {"type": "boolean"}, "none": {"type": "null"},
      "maybe": {"type": ["string", "null"]}},
      "required": ["color", "kind", "x", "ok", "none", "maybe"], "additionalProperties": false})");
  EXPECT_TRUE(matches(g, R"({"color":"red","kind":"fixed","x":-1.5e+3,"ok":true,"none":null,"maybe":null})"));
  EXPECT_TRUE(matches(g, R"({"color":3,"kind":"fixed","x":0,"ok":false,"none":null,"maybe":"s"})"));
  EXPECT_FALSE(matches(g, R"({"color":"blue","kind":"fixed","x":0,"ok":false,"none":null,"maybe":"s"})"));
  EXPECT_FALSE(matches(g, R"({"color":"red","kind":"other","x":0,"ok":false,"none":null,"maybe":"s"})"));
  EXPECT_FALSE(matches(g, R"({"color":"red","kind":"fixed","x":01,"ok":false,"none":null,"maybe":"s"})"));
}

TEST(JsonSchemaToGbnf, ArraysWithBounds) {
  Grammar g = compile(R"({"type": "array", "items": {"type": "integer"}, "minItems": 2, "maxItems": 3})");
  EXPECT_FALSE(matches(g, "[1]"));
  EXPECT_TRUE(matches(g, "[1,2]"));
  EXPECT_TRUE(matches(g, "[1,2,3]"));
  EXPECT_FALSE(matches(g, "[1, 2, 3]"));
  EXPECT_FALSE(matches(g, "[1,2,3,4]"));
  Grammar any = compile(R"({"type": "array"})");
  EXPECT_TRUE(matches(any, R"([1,"a",{"b":[null]}])"));
  EXPECT_TRUE(matches(any, "[]"));
}

TEST(JsonSchemaToGbnf, RecursiveDefsAndAnyOf) {
  Grammar g = compile(R"({"$ref": "#/$defs/node", "$defs": {"node": {"type": "object",
      "properties": {"value": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
                     "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}},
      "required": ["value", "children"], "additionalProperties": false}}})");
  EXPECT_TRUE(matches(g, R"({"value":1,"children":[{"value":"a","children":[]},{"value":2,"children":[{"value":3,"children":[]}]}]})"));
  EXPECT_FALSE(matches(g, R"({"value":true,"children":[]})"));
  Grammar root_ref = compile(R"({"type": "object", "properties": {"next": {"anyOf": [{"$ref": "#"}, {"type": "null"}]}},
                                "required": ["next"], "additionalProperties": false})");
  EXPECT_TRUE(matches(root_ref, R"({"next":{"next":{"next":null}}})"));
}

TEST(JsonSchemaToGbnf, GenericJsonObject) {
  Grammar g = parse_gbnf(json_object_gbnf());
  EXPECT_TRUE(matches(g, R"({"a":[1,2.5,-3e10,true,false,null,"x\n"],"b":{}})"));
  EXPECT_FALSE(matches(g, R"({"a": 1})"));
  Grammar flexible = parse_gbnf(json_object_gbnf(JsonWhitespace::Flexible));
  EXPECT_TRUE(matches(flexible, R"({"a": [1, 2.5, -3e10, true, false, null, "x\n"], "b": {}})"));
  EXPECT_FALSE(matches(flexible, "{" + std::string(21, ' ') + "}"));  // at most 20 between tokens
  EXPECT_FALSE(matches(g, "[1]"));  // an object at the top
  EXPECT_FALSE(matches(g, R"({"a": tru})"));
  EXPECT_FALSE(matches(g, "{\"a\": \"\x01\"}"));  // raw control characters are not JSON
}

void expect_error(const char* schema, const char* needle) {
  try {
    (void)json_schema_to_gbnf(ordered_json::parse(schema));
    ADD_FAILURE() << "no error for " << schema;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(JsonSchemaToGbnf, UnsupportedPartsAreNamedByJsonPointer) {
  expect_error(R"({"type": "object", "properties": {"tags": {"type": "array", "uniqueItems": true}}})",
               "#/properties/tags/uniqueItems: 'uniqueItems' is not supported");
  expect_error(R"({"type": "object", "properties": {"a/b": {"type": "string", "pattern": "(a)\\1"}}})",
               "#/properties/a~1b/pattern: 'pattern' uses a back-reference");
  expect_error(R"({"properties": {"a": {"not": {}}}})", "#/properties/a/not: 'not' is not supported");
  expect_error(R"({"if": {}, "then": {}})", "#/if: 'if'/'then'/'else' is not supported");
  expect_error(R"({"dependentSchemas": {"a": {}}})", "#/dependentSchemas");
  expect_error(R"({"type": "array", "items": {"oneOf": [{"type": "integer"}, {"minimum": 2}]}})",
               "#/items/oneOf: 'oneOf' is supported only when its branches provably exclude each other");
  expect_error(R"({"type": "date"})", "#/type: unknown type 'date'");
  expect_error(R"({"$ref": "#/$defs/missing"})", "#/$ref: '$ref' '#/$defs/missing' does not name");
  expect_error(R"({"type": "array", "minItems": 3, "maxItems": 2})", "#: no value satisfies the schema");
  expect_error(R"({"type": "array", "maxItems": 2000000000})", "#/maxItems: 'maxItems' above 1000000000");
  expect_error(R"({"type": "integer", "minimum": 1e60})", "#/minimum: a bound with more than 40 digits");
  expect_error(R"({"anyOf": []})", "#/anyOf");
}

TEST(JsonSchemaToGbnf, AnnotationsAreIgnored) {
  Grammar g = compile(R"({"title": "T", "description": "d", "$schema": "x", "type": "object", "x-vendor": {"k": 1},
                         "$id": "urn:x", "id": "old", "$anchor": "a", "$comment": "c", "readOnly": true, "writeOnly": false,
                         "deprecated": true, "contentMediaType": "text/plain", "name": "n", "readonly": true,
                         "_format": "f", "examples": [1], "default": {}, "format": "no-such-format",
                         "properties": {"a": {"type": "boolean", "description": "flag"}}, "required": ["a"],
                         "additionalProperties": false})");
  EXPECT_TRUE(matches(g, R"({"a":true})"));
}

}  // namespace
}  // namespace seer::grammar
