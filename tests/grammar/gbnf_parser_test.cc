#include "grammar/gbnf_parser.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "grammar/grammar_test_util.h"

namespace seer::grammar {
namespace {

using testing::matches;
using testing::prefix_ok;

TEST(GbnfParser, LiteralsAlternationAndSequences) {
  Grammar g = parse_gbnf(R"(root ::= "ab" | "c" d
d ::= "x" "y")");
  EXPECT_TRUE(matches(g, "ab"));
  EXPECT_TRUE(matches(g, "cxy"));
  EXPECT_FALSE(matches(g, "a"));
  EXPECT_TRUE(prefix_ok(g, "a"));
  EXPECT_FALSE(prefix_ok(g, "b"));
  EXPECT_FALSE(matches(g, "abx"));
}

TEST(GbnfParser, RepetitionOperators) {
  Grammar g = parse_gbnf(R"(root ::= "a"* "b"+ "c"? "d"{2} "e"{1,3} "f"{2,})");
  EXPECT_TRUE(matches(g, "bddeff"));
  EXPECT_TRUE(matches(g, "aaabbcddeeefff"));
  EXPECT_FALSE(matches(g, "ddeff"));       // b+ needs one
  EXPECT_FALSE(matches(g, "bdeff"));       // d{2}
  EXPECT_FALSE(matches(g, "bddeeeeff"));   // e{1,3}
  EXPECT_FALSE(matches(g, "bddef"));       // f{2,}
  EXPECT_FALSE(matches(g, "bbccddeff"));   // c? at most one
}

TEST(GbnfParser, GroupsAndNewlines) {
  Grammar g = parse_gbnf(R"(# a comment
root ::= ( "x" | "y" )+ tail   # trailing comment
tail ::=
  ( ","
    "z" )*
  | "!"
)");
  EXPECT_TRUE(matches(g, "xyx,z,z"));
  EXPECT_TRUE(matches(g, "y!"));
  EXPECT_FALSE(matches(g, "y,z!"));
}

TEST(GbnfParser, CharClassesRangesNegationAndAny) {
  Grammar g = parse_gbnf(R"(root ::= [a-c0-9_] [^a-z] . [\]\-])");
  EXPECT_TRUE(matches(g, "bZé]"));
  EXPECT_TRUE(matches(g, "_!!-"));
  EXPECT_FALSE(matches(g, "dZ!]"));
  EXPECT_FALSE(matches(g, "aq!]"));
}

TEST(GbnfParser, EscapesAndUnicode) {
  Grammar g = parse_gbnf(R"(root ::= "\n\t\"\\" [\x41-\x43] "\u00e9" [\U0001F600-\U0001F64F] "ü")");
  EXPECT_TRUE(matches(g, "\n\t\"\\Bé\xF0\x9F\x98\x80ü"));
  EXPECT_FALSE(matches(g, "\n\t\"\\Dé\xF0\x9F\x98\x80ü"));
}

TEST(GbnfParser, MultiByteCharactersSplitAcrossFeeds) {
  Grammar g = parse_gbnf(R"(root ::= [α-γ]+)");
  StackMachine m(g);
  MatchState s = m.initial();
  const std::string beta = "β";  // two bytes
  ASSERT_TRUE(m.accept(s, beta.substr(0, 1)));
  EXPECT_FALSE(StackMachine::can_end(s));  // half a character
  ASSERT_TRUE(m.accept(s, beta.substr(1)));
  EXPECT_TRUE(StackMachine::can_end(s));
  MatchState t = m.initial();
  EXPECT_FALSE(m.accept(t, "\xD0"));  // lead byte of Cyrillic: no completion is in [α-γ]
}

TEST(GbnfParser, OverlongSurrogateAndOutOfRangeSequencesAreRefused) {
  Grammar g = parse_gbnf(R"(root ::= [^"]*)");
  EXPECT_TRUE(matches(g, "a\xC3\xA9\xED\x9F\xBF\xF4\x8F\xBF\xBF"));  // é, U+D7FF, U+10FFFF
  EXPECT_FALSE(prefix_ok(g, "\xC1"));          // only overlong forms start with C1
  EXPECT_FALSE(prefix_ok(g, "\xE0\x80"));      // overlong 3-byte form
  EXPECT_FALSE(prefix_ok(g, "\xED\xA0"));      // a surrogate, whatever follows
  EXPECT_FALSE(prefix_ok(g, "\xF4\x90"));      // beyond U+10FFFF
  EXPECT_FALSE(prefix_ok(g, "\x80"));          // a continuation byte first
  EXPECT_TRUE(prefix_ok(g, "\xED"));           // U+D000-D7FF remain possible
}

TEST(GbnfParser, RecursionThatIsNotLeft) {
  Grammar g = parse_gbnf(R"g(root ::= "(" root ")" | "")g");
  EXPECT_TRUE(matches(g, "((()))"));
  EXPECT_TRUE(matches(g, ""));
  EXPECT_FALSE(matches(g, "(()"));
}

void expect_error(const char* text, const char* needle) {
  try {
    (void)parse_gbnf(text);
    ADD_FAILURE() << "no error for " << text;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(GbnfParser, ErrorsNameTheProblemAndPlace) {
  expect_error(R"(root ::= foo)", "'foo' is used but never defined");
  expect_error(R"(start ::= "a")", "no 'root' rule");
  expect_error(R"(root ::= root "a" | "b")", "left-recursive");
  expect_error(R"(root ::= x "a"
x ::= "" | root)", "left-recursive");
  expect_error(R"(root ::= "abc)", "unterminated string");
  expect_error(R"(root ::= [a-)", "unterminated character class");
  expect_error(R"(root ::= "a"{3,1})", "max below min");
  expect_error(R"(root ::= * "a")", "follows nothing");
  expect_error(R"(root ::= "a"
root ::= "b")", "defined twice");
  expect_error("root ::= \"a\"\nroot2 \"b\"", "line 2, column 7: expected '::='");
  expect_error(R"(root ::= "\q")", "unknown escape");
  expect_error(R"(root ::= ( "a" )", "expected ')'");
}

}  // namespace
}  // namespace seer::grammar
