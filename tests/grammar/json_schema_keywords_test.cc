// Keyword by keyword: what compiles never accepts an instance that violates it
// (random bounds and instances against an oracle in integer arithmetic), and stays small.
#include <random>

#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_check.h"

namespace seer::grammar {
namespace {

using nlohmann::ordered_json;

GrammarChecker checker(const std::string& schema) { return GrammarChecker::from_schema(ordered_json::parse(schema)); }

// A decimal with `frac` fraction digits from a scaled integer (v / 10^frac), as JSON writes it.
std::string decimal_text(int64_t v, int frac) {
  if (frac == 0) return std::to_string(v);
  std::string digits = std::to_string(v < 0 ? -v : v);
  if (digits.size() <= static_cast<size_t>(frac)) digits.insert(0, static_cast<size_t>(frac) + 1 - digits.size(), '0');
  std::string text = (v < 0 ? "-" : "") + digits.substr(0, digits.size() - frac) + "." + digits.substr(digits.size() - frac);
  return text;
}

TEST(JsonSchemaKeywords, RandomIntegerBoundsAreExact) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> bound(-100000, 100000), pick(0, 3);
  for (int round = 0; round < 60; ++round) {
    const int64_t lo = bound(rng), hi = lo + 2 + std::abs(bound(rng)) % 5000 * (round % 7 == 0 ? 0 : 1);
    const bool lo_ex = pick(rng) == 0, hi_ex = pick(rng) == 0;
    ordered_json s = {{"type", "integer"}};
    if (round % 5 != 1) s[lo_ex ? "exclusiveMinimum" : "minimum"] = lo;
    if (round % 5 != 2) s[hi_ex ? "exclusiveMaximum" : "maximum"] = hi;
    const GrammarChecker c = GrammarChecker::from_schema(s);
    for (int i = 0; i < 200; ++i) {
      const int64_t x = i < 8 ? std::vector<int64_t>{lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, 0, -1}[i] : lo - 3000 + bound(rng) % 9000;
      bool ok = true;
      if (s.contains("minimum")) ok = ok && x >= lo;
      if (s.contains("exclusiveMinimum")) ok = ok && x > lo;
      if (s.contains("maximum")) ok = ok && x <= hi;
      if (s.contains("exclusiveMaximum")) ok = ok && x < hi;
      EXPECT_EQ(c.accepts(std::to_string(x)), ok) << s.dump() << " x=" << x;
    }
    EXPECT_FALSE(c.accepts("1.5"));
  }
}

TEST(JsonSchemaKeywords, RandomDecimalBoundsAreExact) {
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<int64_t> bound(-300000, 300000), pick(0, 3);
  for (int round = 0; round < 60; ++round) {
    // Bounds with up to 3 fraction digits, instances with up to 4 (all scaled by 10^4).
    const int64_t lo = bound(rng) / 10 * 10, hi = lo + (bound(rng) % 40000 + 40000) / 10 * 10;
    const bool lo_ex = pick(rng) == 0, hi_ex = pick(rng) == 0;
    ordered_json s = ordered_json::parse("{\"type\": \"number\", \"" + std::string(lo_ex ? "exclusiveMinimum" : "minimum") +
                                         "\": " + decimal_text(lo / 10, 3) + ", \"" +
                                         std::string(hi_ex ? "exclusiveMaximum" : "maximum") + "\": " + decimal_text(hi / 10, 3) + "}");
    const GrammarChecker c = GrammarChecker::from_schema(s);
    for (int i = 0; i < 200; ++i) {
      const int64_t x = i < 6 ? std::vector<int64_t>{lo - 1, lo, lo + 1, hi - 1, hi, hi + 1}[i] : lo - 20000 + std::abs(bound(rng)) % 120000;
      const bool ok = (lo_ex ? x > lo : x >= lo) && (hi_ex ? x < hi : x <= hi);
      const int frac = static_cast<int>(pick(rng)) + 1;
      std::string text = decimal_text(x, 4);
      if (x % 10 == 0 && frac < 4) text = decimal_text(x / 10, 3);  // the same value written shorter
      EXPECT_EQ(c.accepts(text), ok) << s.dump() << " x=" << text;
    }
  }
}

TEST(JsonSchemaKeywords, MultipleOfIntegers) {
  const GrammarChecker c = checker(R"({"type": "integer", "multipleOf": 7})");
  for (int x = -200; x <= 200; ++x) EXPECT_EQ(c.accepts(std::to_string(x)), x % 7 == 0) << x;
  const GrammarChecker cents = checker(R"({"type": "number", "multipleOf": 0.01})");
  EXPECT_TRUE(cents.accepts("12.34"));
  EXPECT_FALSE(cents.accepts("12.345"));
}

TEST(JsonSchemaKeywords, StringLengthsCountCodePoints) {
  const GrammarChecker c = checker(R"({"type": "string", "minLength": 2, "maxLength": 3})");
  EXPECT_FALSE(c.accepts(R"("a")"));
  EXPECT_TRUE(c.accepts(R"("ab")"));
  EXPECT_TRUE(c.accepts("\"\xC3\xA9\\n\xF0\x9F\x98\x80\""));  // é, \n, 😀: three characters
  EXPECT_FALSE(c.accepts(R"("abcd")"));
}

TEST(JsonSchemaKeywords, LargeCountsStaySmall) {
  const GrammarChecker c = checker(R"({"type": "array", "items": {"type": "integer"}, "minItems": 1234, "maxItems": 100000})");
  EXPECT_LT(c.grammar().elements.size(), 5000u);
  std::string items = "[0";
  for (int i = 1; i < 1233; ++i) items += ",0";
  EXPECT_FALSE(c.accepts(items + "]"));
  EXPECT_TRUE(c.accepts(items + ",0]"));
  const GrammarChecker s = checker(R"({"type": "string", "maxLength": 5000})");
  EXPECT_TRUE(s.accepts("\"" + std::string(5000, 'x') + "\""));
  EXPECT_FALSE(s.accepts("\"" + std::string(5001, 'x') + "\""));
}

TEST(JsonSchemaKeywords, PatternsAreSearchesUnlessAnchored) {
  const GrammarChecker search = checker(R"({"type": "string", "pattern": "a[0-9]{2}"})");
  EXPECT_TRUE(search.accepts(R"("xxa12yy")"));
  EXPECT_FALSE(search.accepts(R"("xxa1yy")"));
  const GrammarChecker anchored = checker(R"({"type": "string", "pattern": "^(?:[A-Z]\\w+|\\d{3})$"})");
  EXPECT_TRUE(anchored.accepts(R"("Hello_1")"));
  EXPECT_TRUE(anchored.accepts(R"("123")"));
  EXPECT_FALSE(anchored.accepts(R"("x123")"));
  const GrammarChecker quotes = checker(R"({"type": "string", "pattern": "^[\"\\\\]+$"})");
  EXPECT_TRUE(quotes.accepts(R"("\"\\")"));
  for (const char* bad : {"(?=a)", "(a)\\1", "\\bx", "a^b", "(a*)*"})
    EXPECT_THROW((void)checker(ordered_json({{"type", "string"}, {"pattern", bad}}).dump()), Error) << bad;
}

TEST(JsonSchemaKeywords, ObjectsWithExtraKeysNeverRepeatDeclaredOnes) {
  const GrammarChecker c = checker(R"({"type": "object", "properties": {"a": {"type": "integer"}},
                                       "additionalProperties": {"type": "string"}, "required": ["a"]})");
  EXPECT_TRUE(c.accepts(R"({"a":1,"b":"x","ab":"y"})"));
  EXPECT_FALSE(c.accepts(R"({"a":1,"a":"x"})"));  // a declared name is not an extra key
  EXPECT_FALSE(c.accepts(R"({"a":1,"b":2})"));
  const GrammarChecker bounded = checker(R"({"type": "object", "additionalProperties": {"type": "null"}, "maxProperties": 2})");
  EXPECT_TRUE(bounded.accepts(R"({"x":null,"y":null})"));
  EXPECT_FALSE(bounded.accepts(R"({"x":null,"y":null,"z":null})"));
}

TEST(JsonSchemaKeywords, CombinatorsAndDraftSpellings) {
  const GrammarChecker all = checker(R"({"allOf": [{"type": "integer", "minimum": 0}, {"maximum": 9}]})");
  EXPECT_TRUE(all.accepts("9"));
  EXPECT_FALSE(all.accepts("10"));
  const GrammarChecker one = checker(R"({"oneOf": [{"type": "object", "properties": {"k": {"const": "a"}, "x": {"type": "integer"}}, "required": ["k"]},
                                                   {"type": "object", "properties": {"k": {"const": "b"}}, "required": ["k"]}]})");
  EXPECT_TRUE(one.accepts(R"({"k":"b"})"));
  const GrammarChecker draft4 = checker(R"({"definitions": {"n": {"type": "integer", "minimum": 5, "exclusiveMinimum": true}},
                                            "$ref": "#/definitions/n"})");
  EXPECT_FALSE(draft4.accepts("5"));
  EXPECT_TRUE(draft4.accepts("6"));
  const GrammarChecker sibling = checker(R"({"$defs": {"s": {"type": "string"}}, "$ref": "#/$defs/s", "maxLength": 2})");
  EXPECT_TRUE(sibling.accepts(R"("ab")"));
  EXPECT_FALSE(sibling.accepts(R"("abc")"));
  const GrammarChecker typed = checker(R"({"type": ["integer", "string"], "minimum": 3, "minLength": 2})");
  EXPECT_TRUE(typed.accepts("3"));
  EXPECT_FALSE(typed.accepts("2"));
  EXPECT_TRUE(typed.accepts(R"("ab")"));
  EXPECT_FALSE(typed.accepts(R"("a")"));
  const GrammarChecker tuple = checker(R"({"prefixItems": [{"type": "integer"}, {"type": "string"}], "items": false})");
  EXPECT_TRUE(tuple.accepts(R"([1,"a"])"));
  EXPECT_TRUE(tuple.accepts(R"([1])"));
  EXPECT_FALSE(tuple.accepts(R"([1,"a",2])"));
}

}  // namespace
}  // namespace seer::grammar
