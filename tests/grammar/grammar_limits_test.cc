// The limits on a GBNF text a client sends (issue 53): group nesting, chains of rules
// that begin with one another, the size after repetitions, and the matcher's bounds on
// expanding references. Each just under its limit is accepted; just over, refused with
// a message naming the limit (or, in the matcher, the excess parse dropped).
#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_test_util.h"

namespace seer::grammar {
namespace {

using testing::matches;

// The message of the seer::Error parsing `text` throws ("" when it parses).
std::string parse_error(const std::string& text) {
  try {
    (void)parse_gbnf(text);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string nested_groups(int depth) {
  return "root ::= " + std::string(static_cast<size_t>(depth), '(') + "\"a\"" + std::string(static_cast<size_t>(depth), ')');
}

// root ::= r1, r1 ::= r2, ..., r{n-1} ::= "a": n rules, each beginning with the next.
std::string rule_chain(int n) {
  std::string g = "root ::= r1\n";
  for (int i = 1; i + 1 < n; ++i) g += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + "\n";
  return g + "r" + std::to_string(n - 1) + " ::= \"a\"\n";
}

TEST(GrammarLimits, GroupsNestUpToTheLimit) {
  Grammar g = parse_gbnf(nested_groups(kMaxGroupNesting));
  EXPECT_TRUE(matches(g, "a"));
  const std::string e = parse_error(nested_groups(kMaxGroupNesting + 1));
  EXPECT_NE(e.find("groups nest deeper than 64 levels (the GBNF nesting limit)"), std::string::npos) << e;
  EXPECT_NE(e.find("line 1, column 74"), std::string::npos) << e;  // at the 65th '('
}

TEST(GrammarLimits, SeventeenThousandNestedGroupsAreRefusedNotACrash) {
  EXPECT_NE(parse_error(nested_groups(17500)).find("GBNF nesting limit"), std::string::npos);
}

TEST(GrammarLimits, RuleChainsUpToTheLimit) {
  Grammar g = parse_gbnf(rule_chain(kMaxRuleChain));
  EXPECT_TRUE(matches(g, "a"));
  const std::string e = parse_error(rule_chain(kMaxRuleChain + 1));
  EXPECT_NE(e.find("more than 1000 rules chained by their first references"), std::string::npos) << e;
  EXPECT_NE(e.find("(the GBNF rule-chain limit)"), std::string::npos) << e;
  EXPECT_NE(parse_error(rule_chain(200000)).find("rule-chain limit"), std::string::npos);
}

TEST(GrammarLimits, ChainsCountGroupsAndNullablePrefixes) {
  // A group is a rule; an optional item before a reference lets the rule begin with it.
  std::string g = "root ::= r1\n";
  for (int i = 1; i < kMaxRuleChain; ++i) g += "r" + std::to_string(i) + " ::= \"x\"? r" + std::to_string(i + 1) + "\n";
  g += "r" + std::to_string(kMaxRuleChain) + " ::= \"a\"\n";
  EXPECT_NE(parse_error(g).find("rule-chain limit"), std::string::npos);
  // Rules after one another in a sequence are not a chain.
  std::string wide = "root ::=";
  for (int i = 1; i <= 3 * kMaxRuleChain; ++i) wide += " r" + std::to_string(i);
  wide += "\n";
  for (int i = 1; i <= 3 * kMaxRuleChain; ++i) wide += "r" + std::to_string(i) + " ::= \"a\"\n";
  EXPECT_EQ(parse_error(wide), "");
}

TEST(GrammarLimits, LeftRecursionIsStillNamed) {
  EXPECT_NE(parse_error("root ::= a\na ::= b \"x\"\nb ::= \"y\"? a\n").find("left-recursive"), std::string::npos);
}

TEST(GrammarLimits, RepetitionsExpandUpToTheSizeLimit) {
  // 100 characters x 10,000 copies: 1,000,000 elements, under 2^20 = 1,048,576.
  const std::string hundred(100, 'a');
  EXPECT_EQ(parse_error("root ::= \"" + hundred + "\"{10000}"), "");
  const std::string e = parse_error("root ::= \"" + hundred + "\"{10000} \"" + std::string(50000, 'b') + "\"");
  EXPECT_NE(e.find("more than 1048576 elements (the GBNF size limit)"), std::string::npos) << e;
  const std::string big = parse_error("root ::= \"" + std::string(2000, 'a') + "\"{10000}");
  EXPECT_NE(big.find("more than 1048576 elements (the GBNF size limit)"), std::string::npos) << big;
  // Optional copies are rules of their own: 10,000 of 103 elements fit once, not twice.
  EXPECT_EQ(parse_error("root ::= \"" + hundred + "\"{0,10000}"), "");
  EXPECT_NE(parse_error("root ::= \"" + hundred + "\"{0,10000} \"" + hundred + "\"{0,10000}").find("size limit"),
            std::string::npos);
}

TEST(GrammarLimits, ManyRulesAndClassesParseInLinearTime) {
  // 100,000 distinct groups and classes: a quadratic lookup took minutes here.
  std::string g = "root ::=";
  for (int i = 0; i < 100000; ++i) g += " ([\\x00-\\U" + fmt::format("{:08X}", 0x100 + i) + "])";
  EXPECT_EQ(parse_error(g), "");
}

// Nullable references side by side expand one inside another: root ::= e e ... e "a"
// recurses once per `e` before it reaches "a" (its rule chain is only root -> e).
std::string nullable_run(int n) {
  std::string g = "root ::=";
  for (int i = 0; i < n; ++i) g += " e";
  return g + " \"a\"\ne ::= \"\" | \"b\"\n";
}

TEST(GrammarLimits, MatcherDropsExpansionsPastItsDepth) {
  const int limit = StackMachine::kMaxExpansionDepth;
  EXPECT_TRUE(matches(parse_gbnf(nullable_run(limit - 10)), "a"));
  Grammar over = parse_gbnf(nullable_run(limit + 10));
  EXPECT_FALSE(matches(over, "a"));  // that parse is past the depth: dropped, not a crash
  EXPECT_TRUE(matches(over, std::string(20, 'b') + "a"));  // 20 fewer references to expand
}

TEST(GrammarLimits, MatcherBoundsAnAmbiguousChain) {
  // Each link doubles the ways to reach "a": 2^60 expansions without the step bound.
  std::string g = "root ::= r0\n";
  for (int i = 0; i < 60; ++i) g += "r" + std::to_string(i) + " ::= r" + std::to_string(i + 1) + " | r" + std::to_string(i + 1) + "\n";
  g += "r60 ::= \"a\"\n";
  EXPECT_TRUE(matches(parse_gbnf(g), "a"));
}

}  // namespace
}  // namespace seer::grammar
