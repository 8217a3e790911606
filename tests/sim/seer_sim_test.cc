// Policy `seer` in the simulator (docs/seer-policy.md): multi-turn conversations
// under memory pressure with a predictor that is wrong one time in five. Every
// turn finishes without a leak (invariants audited every step), later turns hit
// the conversation cache, and mispredictions do not become a preemption storm.
#include <gtest/gtest.h>

#include <random>

#include "sim/sim_runner.h"
#include "sim_test_util.h"

namespace seer {
namespace {

SimResult run(const std::string& policy, const std::vector<TraceEntry>& trace) {
  SimSetup s = testing::small_setup(policy, /*kv_tokens=*/5000);
  s.swap_space_gib = 1;
  s.max_tokens = 256;
  if (policy != "vllm") {
    s.predictor.spec = "noisy:0.8";
    s.predictor.buckets = 16;
    s.predictor.max_len = 256;
  }
  return run_simulation(s, trace);
}

TEST(SeerSim, MultiTurnUnderPressureHitsTheCacheWithoutAPreemptionStorm) {
  for (uint64_t seed : {1u, 2u}) {
    auto trace = testing::random_conversations(seed, 50, {.max_turns = 5, .min_prompt = 8, .max_output = 250, .gap_mean_s = 0.25});
    SimResult seer = run("seer", trace);
    EXPECT_EQ(static_cast<int64_t>(seer.records.size()) + seer.rejected, static_cast<int64_t>(trace.size()));
    ASSERT_TRUE(seer.summary.cache.has_value());
    EXPECT_GT(seer.summary.cache->hit_tokens_device + seer.summary.cache->hit_tokens_host, 0) << "seed " << seed;
    SimResult vllm = run("vllm", trace);
    EXPECT_LT(seer.summary.totals.preemptions, vllm.summary.totals.preemptions) << "seed " << seed;
    EXPECT_LT(seer.summary.totals.recomputed_tokens, vllm.summary.totals.recomputed_tokens) << "seed " << seed;
  }
}

}  // namespace
}  // namespace seer
