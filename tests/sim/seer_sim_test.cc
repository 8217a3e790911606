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

std::vector<TraceEntry> conversations(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> turns(1, 5), prompt(8, 300), output(1, 250);
  std::exponential_distribution<double> gap(4.0), think(1.0);
  std::vector<TraceEntry> out;
  double t = 0;
  for (int c = 0; c < n; ++c) {
    t += gap(rng);
    const int k_turns = turns(rng);
    for (int k = 0; k < k_turns; ++k) {
      TraceEntry e = testing::entry(fmt::format("c{}t{}", c, k), t + k, prompt(rng), output(rng));
      e.conversation = fmt::format("c{}", c);
      e.turn = k;
      if (k > 0) e.think_s = think(rng);
      out.push_back(e);
    }
  }
  return out;
}

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
    auto trace = conversations(seed, 50);
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
