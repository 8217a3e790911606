#include <set>

#include <gtest/gtest.h>

#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig static_config(int32_t batch) {
  SchedulerConfig c;
  c.policy = "static";
  c.max_batch_size = batch;
  return c;
}

TEST(StaticPolicy, NeverAdmitsMidBatch) {
  SchedulerHarness h(static_config(2), KvConfig{4, 64, 0, 0});
  RequestId a = h.add(5, 2).id;
  RequestId b = h.add(3, 6).id;
  RequestId c = h.add(4, 1).id;
  RequestId d = h.add(4, 1).id;

  StepPlan first = h.step();
  ASSERT_EQ(first.chunks.size(), 2u);  // both prompts, whole
  EXPECT_EQ(first.chunks[0].request, a);
  EXPECT_EQ(first.chunks[0].num_tokens, 5);
  EXPECT_EQ(first.chunks[1].request, b);
  // a finishes after its second token; b runs on alone while c and d wait.
  std::set<RequestId> batch = {a, b};
  while (h.requests.find(b)) {
    StepPlan p = h.step();
    for (const auto& ch : p.chunks) EXPECT_TRUE(batch.count(ch.request)) << "request " << ch.request << " joined mid-batch";
  }
  EXPECT_FALSE(h.requests.find(a));
  StepPlan next = h.step();
  ASSERT_EQ(next.chunks.size(), 2u);
  EXPECT_EQ(next.chunks[0].request, c);
  EXPECT_EQ(next.chunks[1].request, d);
  h.run();
}

TEST(StaticPolicy, ReservesMaxTokensAndNeverPreempts) {
  SchedulerHarness h(static_config(8), KvConfig{4, 10, 0, 0});
  // Each reserves (4 + 12) / 4 = 4 blocks: only two fit in 10 blocks.
  for (int i = 0; i < 5; ++i) h.add(4, 3, 12);
  StepPlan first = h.step();
  EXPECT_EQ(first.chunks.size(), 2u);
  EXPECT_EQ(h.kv.table(0).reserved, 4);
  h.run();
  EXPECT_EQ(h.preemptions, 0);
  EXPECT_EQ(h.finished, 5);
}

}  // namespace
}  // namespace seer
