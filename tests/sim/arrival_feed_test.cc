#include "sim/arrival_feed.h"

#include <gtest/gtest.h>

#include "sim/sim_test_util.h"

namespace seer {
namespace {

TEST(ArrivalFeed, ReleasesByTimeInArrivalOrder) {
  std::vector<TraceEntry> t(3);
  t[0] = testing::entry("b", 2.0, 10, 1);
  t[1] = testing::entry("a", 1.0, 10, 1);
  t[2] = testing::entry("c", 2.0, 10, 1);
  ArrivalFeed f(t);
  EXPECT_EQ(*f.next_arrival(), 1.0);
  EXPECT_TRUE(f.pop_ready(0.5).empty());
  auto r = f.pop_ready(1.0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(f.entries()[r[0].index].id, "a");
  r = f.pop_ready(5.0);
  ASSERT_EQ(r.size(), 2u);
  EXPECT_EQ(f.entries()[r[0].index].id, "b");  // ties keep the trace order
  EXPECT_EQ(f.entries()[r[1].index].id, "c");
  EXPECT_TRUE(f.done());
  EXPECT_FALSE(f.next_arrival());
}

TEST(ArrivalFeed, LaterTurnsFollowTheAnswerWithTheirThinkTime) {
  std::vector<TraceEntry> t(3);
  t[0] = testing::entry("c1-t1", 5.0, 20, 8);
  t[0].conversation = "c1";
  t[0].turn = 1;
  t[0].think_s = 3.0;
  t[1] = testing::entry("c1-t0", 0.0, 100, 30);
  t[1].conversation = "c1";
  t[2] = testing::entry("c1-t2", 6.0, 5, 1);
  t[2].conversation = "c1";
  t[2].turn = 2;  // no think time: its own arrival, or the answer if later
  ArrivalFeed f(t);
  auto r = f.pop_ready(100.0);
  ASSERT_EQ(r.size(), 1u);  // only the first turn: the others wait for answers
  EXPECT_EQ(f.entries()[r[0].index].id, "c1-t0");
  EXPECT_EQ(r[0].prompt_len, 100);
  EXPECT_FALSE(f.done());
  EXPECT_FALSE(f.next_arrival());
  f.finished(r[0].index, 10.0, 30);
  EXPECT_EQ(*f.next_arrival(), 13.0);
  r = f.pop_ready(13.0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(f.entries()[r[0].index].id, "c1-t1");
  EXPECT_EQ(r[0].prompt_len, 100 + 30 + 20);
  f.finished(r[0].index, 14.0, 8);
  r = f.pop_ready(14.0);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_DOUBLE_EQ(r[0].arrival_s, 14.0);
  EXPECT_EQ(r[0].prompt_len, 150 + 8 + 5);
  EXPECT_TRUE(f.done());
}

}  // namespace
}  // namespace seer
