// vLLM's defining behaviour end to end: when blocks run out the latest-arrived
// request is preempted, and it later completes with exactly the tokens it produces
// when it runs undisturbed.
#include <gtest/gtest.h>

#include "engine/engine_harness.h"

namespace seer {
namespace {

using testing::EngineHarness;
using testing::make_prompt;

std::map<std::string, std::vector<int32_t>> reference_outputs(int n) {
  SchedulerConfig sc;
  sc.policy = "vllm";
  EngineHarness h(sc, KvConfig{4, 4096, 0, 64});
  for (int i = 0; i < n; ++i) h.add("r" + std::to_string(i), make_prompt(10 + i % 7, i), 40, 20 + (i * 7) % 19);
  EXPECT_TRUE(h.run());
  EXPECT_EQ(h.engine->counters().preemptions, 0);
  std::map<std::string, std::vector<int32_t>> out;
  for (const auto& [id, f] : h.observer.finished) out[id] = f.tokens;
  return out;
}

void expect_identical_after_preemption(PreemptionMode mode) {
  const int n = 8;
  auto reference = reference_outputs(n);
  SchedulerConfig sc;
  sc.policy = "vllm";
  sc.preemption = mode;
  sc.watermark = 0;
  EngineHarness h(sc, KvConfig{4, 24, 64, 64});
  for (int i = 0; i < n; ++i) h.add("r" + std::to_string(i), make_prompt(10 + i % 7, i), 40, 20 + (i * 7) % 19);
  ASSERT_TRUE(h.run());
  const EngineCounters& c = h.engine->counters();
  EXPECT_GT(c.preemptions, 0);
  EXPECT_GT(c.allocation_failures, 0);
  if (mode == PreemptionMode::Recompute) {
    EXPECT_EQ(c.preemptions_recompute, c.preemptions);
    EXPECT_GT(c.recomputed_tokens, 0);
    EXPECT_EQ(c.swapped_bytes, 0);
  } else {
    EXPECT_EQ(c.preemptions_swap, c.preemptions);
    EXPECT_GT(c.swapped_bytes, 0);
    EXPECT_EQ(c.swapped_bytes % 64, 0);
  }
  int preempted_requests = 0;
  ASSERT_EQ(h.observer.finished.size(), static_cast<size_t>(n));
  for (const auto& [id, f] : h.observer.finished) {
    EXPECT_EQ(f.tokens, reference[id]) << id << " (preempted " << f.preemptions << " times)";
    EXPECT_EQ(f.reason, FinishReason::Length);
    if (f.preemptions > 0) ++preempted_requests;
  }
  EXPECT_GT(preempted_requests, 0);
  // The first victim was the latest arrival among the running requests.
  for (const StepPlan& p : h.observer.plans) {
    if (p.preemptions.empty()) continue;
    RequestId victim = p.preemptions[0].request;
    for (const auto& chunk : p.chunks) EXPECT_LT(chunk.request, victim);
    break;
  }
  EXPECT_EQ(h.kv.usage().device.free, 24);
  EXPECT_EQ(h.kv.usage().host.free, 64);
}

TEST(EnginePreemption, RecomputedRequestsReproduceTheirTokens) {
  expect_identical_after_preemption(PreemptionMode::Recompute);
}

TEST(EnginePreemption, SwappedRequestsReproduceTheirTokens) { expect_identical_after_preemption(PreemptionMode::Swap); }

}  // namespace
}  // namespace seer
