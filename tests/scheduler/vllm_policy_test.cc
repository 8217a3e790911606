#include <gtest/gtest.h>

#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig vllm_config(PreemptionMode mode) {
  SchedulerConfig c;
  c.policy = "vllm";
  c.preemption = mode;
  c.watermark = 0;
  return c;
}

TEST(VllmPolicy, PrefillIterationsStallDecodes) {
  SchedulerHarness h(vllm_config(PreemptionMode::Recompute), KvConfig{4, 64, 0, 0});
  RequestId a = h.add(4, 5).id;
  h.step();
  StepPlan decode = h.step();
  ASSERT_EQ(decode.chunks.size(), 1u);
  EXPECT_EQ(decode.chunks[0].request, a);
  RequestId b = h.add(6, 5).id;
  StepPlan prefill = h.step();
  ASSERT_EQ(prefill.chunks.size(), 1u);  // only the new prompt; a's decode waits
  EXPECT_EQ(prefill.chunks[0].request, b);
  EXPECT_EQ(prefill.chunks[0].num_tokens, 6);
  StepPlan both = h.step();
  EXPECT_EQ(both.chunks.size(), 2u);
}

// The token cap is inclusive: prompts that fill max_num_batched_tokens exactly run
// in one iteration; one token more waits.
TEST(VllmPolicy, PromptsFillingTheTokenCapExactlyRunTogether) {
  SchedulerConfig c = vllm_config(PreemptionMode::Recompute);
  c.max_num_batched_tokens = 64;
  SchedulerHarness h(c, KvConfig{4, 64, 0, 0});
  h.add(32, 2);
  h.add(32, 2);
  h.add(1, 2);
  StepPlan p = h.step();
  ASSERT_EQ(p.chunks.size(), 2u);
  EXPECT_EQ(p.num_tokens(), 64);
  h.run();
}

TEST(VllmPolicy, AllocatesBlocksOnDemand) {
  SchedulerHarness h(vllm_config(PreemptionMode::Recompute), KvConfig{4, 64, 0, 0});
  Request& a = h.add(5, 10, 100);
  h.step();
  EXPECT_EQ(h.kv.table(a.id).reserved, 0);
  EXPECT_EQ(h.kv.table(a.id).num_device, 2);
  for (int i = 0; i < 3; ++i) h.step();  // decodes of positions 5, 6, 7: two blocks
  EXPECT_EQ(h.kv.table(a.id).num_device, 2);
  h.step();  // position 8 needs a third
  EXPECT_EQ(h.kv.table(a.id).num_device, 3);
}

void expect_latest_arrival_preempted(PreemptionMode mode) {
  // 6 blocks of 4 tokens; a and b start with 2 blocks each and grow.
  SchedulerHarness h(vllm_config(mode), KvConfig{4, 6, 16, 0});
  RequestId a = h.add(8, 12, 12, 0.0).id;
  RequestId b = h.add(8, 12, 12, 1.0).id;
  bool seen = false;
  while (!seen && h.steps < 50) {
    h.step([&](const StepPlan& p) {
      if (p.preemptions.empty()) return;
      seen = true;
      ASSERT_EQ(p.preemptions.size(), 1u);
      EXPECT_EQ(p.preemptions[0].request, b);
      EXPECT_EQ(p.preemptions[0].mode, mode);
      EXPECT_GE(p.allocation_failures, 1);
      for (const auto& c : p.chunks) EXPECT_NE(c.request, b);
      const Request& rb = h.requests.get(b);
      EXPECT_EQ(rb.preemptions, 1);  // counted once
      if (mode == PreemptionMode::Recompute) {
        EXPECT_EQ(rb.state, RequestState::Waiting);
        EXPECT_EQ(rb.num_computed_tokens, 0);
        EXPECT_EQ(p.preemptions[0].lost_tokens, 12);  // 8 prompt + 4 outputs computed
        EXPECT_FALSE(h.kv.has(b));
      } else {
        EXPECT_EQ(rb.state, RequestState::Swapped);
        EXPECT_EQ(h.kv.table(b).num_host, p.preemptions[0].swapped_blocks);
        ASSERT_FALSE(p.kv_ops.empty());
        EXPECT_EQ(p.kv_ops[0].kind, KvOpKind::SwapOut);
      }
    });
  }
  ASSERT_TRUE(seen);
  EXPECT_TRUE(h.requests.find(a));
  h.run();
  EXPECT_EQ(h.finished, 2);
  EXPECT_EQ(h.kv.usage().device.free, 6);
  EXPECT_EQ(h.kv.usage().host.free, 16);
}

TEST(VllmPolicy, PreemptsLatestArrivalByRecompute) { expect_latest_arrival_preempted(PreemptionMode::Recompute); }
TEST(VllmPolicy, PreemptsLatestArrivalBySwap) { expect_latest_arrival_preempted(PreemptionMode::Swap); }

TEST(VllmPolicy, SwapFallsBackToRecomputeWithoutHostTier) {
  SchedulerHarness h(vllm_config(PreemptionMode::Swap), KvConfig{4, 6, 0, 0});
  h.add(8, 12, 12, 0.0);
  h.add(8, 12, 12, 1.0);
  while (h.requests.size() > 0 && h.steps < 200) {
    h.step([&](const StepPlan& p) {
      for (const auto& pr : p.preemptions) EXPECT_EQ(pr.mode, PreemptionMode::Recompute);
      EXPECT_TRUE(p.kv_ops.empty());
    });
  }
  EXPECT_GT(h.preemptions, 0);
  EXPECT_EQ(h.finished, 2);
}

}  // namespace
}  // namespace seer
