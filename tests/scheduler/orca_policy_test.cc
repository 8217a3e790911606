#include <gtest/gtest.h>

#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig orca_config(int32_t batch) {
  SchedulerConfig c;
  c.policy = "orca";
  c.max_batch_size = batch;
  return c;
}

TEST(OrcaPolicy, ReservesPromptPlusMaxTokens) {
  SchedulerHarness h(orca_config(8), KvConfig{4, 10, 0, 0});
  Request& a = h.add(6, 2, 14);  // (6 + 14) / 4 = 5 blocks
  h.step();
  EXPECT_EQ(a.reserved_tokens, 20);
  EXPECT_EQ(h.kv.table(a.id).reserved, 5);
  EXPECT_EQ(h.kv.table(a.id).num_device, 2);
  EXPECT_EQ(h.kv.usage().reserved_unused, 3);
  EXPECT_EQ(h.kv.usage().available(), 5);
}

TEST(OrcaPolicy, AdmitsOnlyWhenTheWholeReservationFits) {
  SchedulerHarness h(orca_config(8), KvConfig{4, 10, 0, 0});
  RequestId a = h.add(4, 3, 16).id;  // 5 blocks
  RequestId b = h.add(4, 3, 16).id;  // 5 blocks
  RequestId c = h.add(4, 1, 16).id;  // its prompt alone would fit in a block
  StepPlan p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.chunks[1].request, b);
  // c waits until a and b free their reservations.
  while (h.requests.find(a)) {
    StepPlan q = h.step();
    for (const auto& ch : q.chunks) EXPECT_NE(ch.request, c);
  }
  h.run();
  EXPECT_EQ(h.preemptions, 0);
}

TEST(OrcaPolicy, MixesDecodesWithNewPromptsUnderBatchCap) {
  SchedulerHarness h(orca_config(2), KvConfig{4, 64, 0, 0});
  RequestId a = h.add(4, 5).id;
  h.step();
  RequestId b = h.add(7, 5).id;
  h.add(3, 5);
  StepPlan p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);  // a's decode and b's whole prompt; cap 2 keeps the third out
  EXPECT_EQ(p.chunks[0].request, a);
  EXPECT_EQ(p.chunks[0].num_tokens, 1);
  EXPECT_EQ(p.chunks[1].request, b);
  EXPECT_EQ(p.chunks[1].num_tokens, 7);
  while (h.requests.size() > 0) {
    h.step();
    EXPECT_LE(h.scheduler->num_running(), 2u);
  }
}

}  // namespace
}  // namespace seer
