#include <gtest/gtest.h>

#include "sampling/stop_matcher.h"

namespace seer {
namespace {

TEST(StopMatcher, PassesTextThroughWithoutStops) {
  StopMatcher m({});
  bool hit = true;
  EXPECT_EQ(m.push("hello", &hit), "hello");
  EXPECT_FALSE(hit);
  EXPECT_EQ(m.flush(), "");
}

TEST(StopMatcher, StopInsideOneChunk) {
  StopMatcher m({"END"});
  bool hit = false;
  EXPECT_EQ(m.push("abc END def", &hit), "abc ");
  EXPECT_TRUE(hit);
}

TEST(StopMatcher, StopAcrossTokenBoundariesIsHeldBack) {
  StopMatcher m({"\n\nUser:"});
  bool hit = false;
  std::string out;
  out += m.push("Sure.", &hit);
  EXPECT_EQ(out, "Sure.");
  out += m.push("\n", &hit);
  EXPECT_EQ(out, "Sure.");  // "\n" could start the stop string
  out += m.push("\nUs", &hit);
  EXPECT_EQ(out, "Sure.");
  EXPECT_FALSE(hit);
  out += m.push("er: hi", &hit);
  EXPECT_TRUE(hit);
  EXPECT_EQ(out, "Sure.");
}

TEST(StopMatcher, HeldTextIsReleasedWhenItDiverges) {
  StopMatcher m({"stop"});
  bool hit = false;
  EXPECT_EQ(m.push("a st", &hit), "a ");
  EXPECT_EQ(m.push("ar", &hit), "star");
  EXPECT_FALSE(hit);
  EXPECT_EQ(m.push("s", &hit), "");
  EXPECT_EQ(m.flush(), "s");
}

TEST(StopMatcher, EarliestOfSeveralStopsWins) {
  StopMatcher m({"world", "lo w"});
  bool hit = false;
  EXPECT_EQ(m.push("hel", &hit), "he");  // "l" may start "lo w"
  EXPECT_EQ(m.push("lo world", &hit), "l");
  EXPECT_TRUE(hit);
}

TEST(StopMatcher, OverlappingPrefixInsideHeldText) {
  // "aab" with stop "ab": the held "a" must not hide the match that starts one later.
  StopMatcher m({"ab"});
  bool hit = false;
  EXPECT_EQ(m.push("a", &hit), "");
  EXPECT_EQ(m.push("a", &hit), "a");
  EXPECT_EQ(m.push("b", &hit), "");
  EXPECT_TRUE(hit);
}

TEST(StopMatcher, MultiByteCharactersAreNotSplit) {
  StopMatcher m({"é!"});
  bool hit = false;
  EXPECT_EQ(m.push("caf\xc3\xa9", &hit), "caf");
  EXPECT_EQ(m.push(" ok", &hit), "\xc3\xa9 ok");
  EXPECT_FALSE(hit);
}

}  // namespace
}  // namespace seer
