// Random traces through every preset, preemption mode and allocation rule with the
// KV and queue invariant checkers after every step: no block leaks or is owned
// twice, every request finishes, every block is free at the end.
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

struct Case {
  std::string policy;
  std::string allocation;
  PreemptionMode mode;
};

// Returns the preemptions the trace caused.
int run_random_trace(const Case& k, uint32_t seed) {
  SchedulerConfig c;
  c.policy = k.policy;
  c.allocation = k.allocation;
  c.preemption = k.mode;
  c.max_batch_size = 1 + static_cast<int32_t>(seed % 7);
  c.token_budget = 32 + 16 * static_cast<int32_t>(seed % 5);
  c.max_num_batched_tokens = 96;
  c.watermark = (seed % 2) ? 0.0 : 0.05;
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  const int32_t block_size = 4;
  const int32_t device_blocks = 24 + uniform(0, 16);
  SchedulerHarness h(c, KvConfig{block_size, device_blocks, uniform(0, 1) ? 48 : 0, 0});
  const int total = 40;
  int added = 0;
  while ((added < total || h.requests.size() > 0) && h.steps < 50000) {
    int arrivals = uniform(0, 3) == 0 ? uniform(1, 3) : 0;
    for (int i = 0; i < arrivals && added < total; ++i, ++added) {
      // prompt + max_tokens always fits the device pool alone.
      int32_t prompt = uniform(1, 40);
      int32_t max_tokens = uniform(1, 40);
      Request& r = h.add(prompt, uniform(1, max_tokens), max_tokens);
      if (uniform(0, 1)) r.predicted_output_len = uniform(0, 40);
    }
    h.step();
    if (::testing::Test::HasFailure()) return h.preemptions;
  }
  EXPECT_EQ(h.finished, total);
  EXPECT_EQ(h.requests.size(), 0u);
  EXPECT_EQ(h.kv.usage().device.free, device_blocks);
  EXPECT_EQ(h.kv.usage().host.free, h.kv.usage().host.total);
  EXPECT_EQ(h.kv.usage().reserved_unused, 0);
  EXPECT_EQ(h.kv.usage().request_tables, 0u);
  EXPECT_EQ(h.scheduler->num_waiting() + h.scheduler->num_running() + h.scheduler->num_swapped(), 0u);
  return h.preemptions;
}

class RandomTraces : public ::testing::TestWithParam<Case> {};

TEST_P(RandomTraces, InvariantsHoldAndEverythingFinishes) {
  int preemptions = 0;
  for (uint32_t seed = 1; seed <= 25; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    preemptions += run_random_trace(GetParam(), seed);
    if (HasFailure()) return;
  }
  // The pools are small enough that on-demand allocation runs out: the traces
  // exercise preemption, not just admission.
  const std::string alloc = GetParam().allocation.empty() && (GetParam().policy == "vllm" || GetParam().policy == "sarathi")
                                ? "block"
                                : GetParam().allocation;
  if (alloc == "block") {
    EXPECT_GT(preemptions, 0);
  }
  RecordProperty("preemptions", preemptions);
  std::printf("[ stats    ] %d preemptions\n", preemptions);
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (std::string p : {"static", "orca", "vllm", "sarathi"})
    for (std::string a : {"", "max", "block", "exact"})
      for (PreemptionMode m : {PreemptionMode::Recompute, PreemptionMode::Swap}) v.push_back({p, a, m});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AllPolicies, RandomTraces, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return info.param.policy + "_" + (info.param.allocation.empty() ? "default" : info.param.allocation) +
                                  (info.param.mode == PreemptionMode::Swap ? "_swap" : "_recompute");
                         });

TEST(ExactAllocation, ReservesPaddedPrediction) {
  SchedulerConfig c;
  c.policy = "orca";
  c.allocation = "exact";
  c.padding = 0.25;
  SchedulerHarness h(c, KvConfig{4, 64, 0, 0});
  Request& a = h.add(8, 5, 100);
  a.predicted_output_len = 16;  // 8 + 16 * 1.25 = 28 tokens = 7 blocks
  Request& b = h.add(8, 5, 100);  // no prediction: max-allocation, 108 tokens = 27 blocks
  h.step();
  EXPECT_EQ(a.reserved_tokens, 28);
  EXPECT_EQ(h.kv.table(a.id).reserved, 7);
  EXPECT_EQ(h.kv.table(b.id).reserved, 27);
}

}  // namespace
}  // namespace seer
