// The JSON Schema compiler's depth limit (issue 53): sub-schemas nested through
// `items`, `properties`, `anyOf` and `$ref` chains count alike. kMaxSchemaDepth levels
// compile (into a grammar the GBNF limits accept); one more is refused naming the
// limit and where it was passed.
#include <functional>

#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_test_util.h"
#include "grammar/json_schema_to_gbnf.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;
using testing::matches;

// `levels` schemas, each wrapping the next with `wrap`, around {"type": "integer"}.
ordered_json nested(int levels, const std::function<ordered_json(ordered_json)>& wrap) {
  ordered_json s = {{"type", "integer"}};
  for (int i = 1; i < levels; ++i) s = wrap(std::move(s));
  return s;
}

ordered_json array_of(ordered_json item) { return {{"type", "array"}, {"items", std::move(item)}}; }
ordered_json any_of(ordered_json s) { return {{"anyOf", ordered_json::array({std::move(s), {{"type", "null"}}})}}; }
ordered_json object_of(ordered_json s) {
  return {{"type", "object"}, {"properties", {{"v", std::move(s)}}}, {"required", {"v"}}};
}

// The root and `defs` schemas d0 ... d{defs-1}, each d_i = link(ref to d_{i+1}), the
// last an integer: defs + 1 levels.
ordered_json ref_chain(int defs, const std::function<ordered_json(ordered_json)>& link) {
  ordered_json d = ordered_json::object();
  for (int i = 0; i + 1 < defs; ++i) d["d" + std::to_string(i)] = link({{"$ref", "#/$defs/d" + std::to_string(i + 1)}});
  d["d" + std::to_string(defs - 1)] = {{"type", "integer"}};
  return {{"$defs", d}, {"$ref", "#/$defs/d0"}};
}
ordered_json as_is(ordered_json s) { return s; }
ordered_json all_of(ordered_json s) { return {{"allOf", ordered_json::array({std::move(s)})}}; }

std::string compile_error(const ordered_json& schema) {
  try {
    (void)parse_gbnf(json_schema_to_gbnf(schema));
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

constexpr const char* kRefused = "the schema nests deeper than 64 levels (sub-schemas and $ref links; the schema depth limit)";

TEST(JsonSchemaLimits, DeepArraysInItems) {
  Grammar g = parse_gbnf(json_schema_to_gbnf(nested(kMaxSchemaDepth, array_of)));
  EXPECT_TRUE(matches(g, std::string(kMaxSchemaDepth - 1, '[') + "7" + std::string(kMaxSchemaDepth - 1, ']')));
  const std::string e = compile_error(nested(kMaxSchemaDepth + 1, array_of));
  EXPECT_NE(e.find(kRefused), std::string::npos) << e;
  EXPECT_EQ(e.rfind("#/items/items/", 0), 0u) << e;  // names where it was passed
}

TEST(JsonSchemaLimits, DeepAnyOf) {
  Grammar g = parse_gbnf(json_schema_to_gbnf(nested(kMaxSchemaDepth, any_of)));
  EXPECT_TRUE(matches(g, "7"));
  EXPECT_TRUE(matches(g, "null"));
  EXPECT_NE(compile_error(nested(kMaxSchemaDepth + 1, any_of)).find(kRefused), std::string::npos);
}

TEST(JsonSchemaLimits, DeepProperties) {
  EXPECT_EQ(compile_error(nested(kMaxSchemaDepth, object_of)), "");
  EXPECT_NE(compile_error(nested(kMaxSchemaDepth + 1, object_of)).find(kRefused), std::string::npos);
}

TEST(JsonSchemaLimits, RefChainsCountEveryLink) {
  Grammar g = parse_gbnf(json_schema_to_gbnf(ref_chain(kMaxSchemaDepth - 1, as_is)));
  EXPECT_TRUE(matches(g, "7"));
  const std::string e = compile_error(ref_chain(kMaxSchemaDepth, as_is));
  EXPECT_NE(e.find(kRefused), std::string::npos) << e;
  EXPECT_EQ(e.rfind("#/$defs/d63:", 0), 0u) << e;
  // The chain of issue 53 (and longer): refused, not a stack overflow.
  EXPECT_NE(compile_error(ref_chain(20000, as_is)).find(kRefused), std::string::npos);
}

TEST(JsonSchemaLimits, RefChainsThroughAnyOfAndItems) {
  EXPECT_EQ(compile_error(ref_chain((kMaxSchemaDepth + 1) / 2, any_of)), "");  // two levels a link
  EXPECT_NE(compile_error(ref_chain(kMaxSchemaDepth, any_of)).find(kRefused), std::string::npos);
  EXPECT_EQ(compile_error(ref_chain((kMaxSchemaDepth + 1) / 2, array_of)), "");
  EXPECT_NE(compile_error(ref_chain(20000, array_of)).find(kRefused), std::string::npos);
}

// allOf is merged by following its $refs: a chain through it is bounded like the others.
TEST(JsonSchemaLimits, RefChainThroughAllOfIsBounded) {
  EXPECT_EQ(compile_error(ref_chain(kMaxSchemaDepth / 2, all_of)), "");
  const std::string e = compile_error(ref_chain(20000, all_of));
  EXPECT_NE(e.find("nests deeper than 64 levels"), std::string::npos) << e;
  EXPECT_LT(e.size(), 300u) << e;
}

TEST(JsonSchemaLimits, RecursiveRefsAreRulesNotLevels) {
  ordered_json list = ordered_json::parse(R"({"$defs": {"node": {"type": "object",
      "properties": {"v": {"type": "integer"}, "next": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}},
      "required": ["v", "next"], "additionalProperties": false}}, "$ref": "#/$defs/node"})");
  Grammar g = parse_gbnf(json_schema_to_gbnf(list));
  std::string deep = "{\"v\":1,\"next\":null}";
  for (int i = 0; i < 200; ++i) deep = "{\"v\":1,\"next\":" + deep + "}";
  EXPECT_TRUE(matches(g, deep));  // output depth is the text's, not the schema's
}

}  // namespace
}  // namespace seer::grammar
