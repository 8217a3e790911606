// Randomized multi-turn runs of the stateful policies under memory pressure, with
// the KV, queue and conversation-cache invariants audited after every step: every
// turn finishes with its true length, nothing leaks, and history KV is reused.
#include <gtest/gtest.h>

#include <random>

#include "sim/sim_runner.h"
#include "sim_test_util.h"

namespace seer {
namespace {

struct Case {
  const char* policy;
  const char* eviction;
};

class PensieveSim : public ::testing::TestWithParam<Case> {};

TEST_P(PensieveSim, RandomConversationsFinishWithoutLeaksAndReuseKv) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto trace = testing::random_conversations(seed, 40);
    SimSetup s = testing::small_setup(GetParam().policy, /*kv_tokens=*/6000);
    s.swap_space_gib = 1;  // a host tier a third of the device tier: drops happen too
    s.eviction = GetParam().eviction;
    s.max_tokens = 256;
    SimResult r = run_simulation(s, trace);
    EXPECT_EQ(static_cast<int64_t>(r.records.size()) + r.rejected, static_cast<int64_t>(trace.size()));
    for (const auto& rec : r.records) EXPECT_GE(rec.output_tokens, 1);
    ASSERT_TRUE(r.summary.cache.has_value());
    const CacheCounters& c = *r.summary.cache;
    if (std::string(GetParam().policy) == "vllm") {
      EXPECT_EQ(c.hit_tokens_device + c.hit_tokens_host, 0);
      EXPECT_GT(c.recomputed_tokens, 0);
    } else {
      EXPECT_GT(c.hit_tokens_device + c.hit_tokens_host, 0) << "seed " << seed;
      // Under this memory pressure the cache evicts: to the host tier (pensieve) or
      // by dropping (pensieve-gpu, or pensieve once the small host tier is full).
      EXPECT_GT(c.dropped_tokens, 0) << "seed " << seed;
      if (std::string(GetParam().policy) == "pensieve") {
        EXPECT_GT(c.hit_tokens_host, 0) << "seed " << seed;
        EXPECT_GT(c.swapped_out_bytes, 0) << "seed " << seed;
      } else {
        EXPECT_EQ(c.hit_tokens_host + c.swapped_out_bytes, 0) << "seed " << seed;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, PensieveSim,
                         ::testing::Values(Case{"pensieve", "pensieve"}, Case{"pensieve", "lru"},
                                           Case{"pensieve-gpu", "pensieve"}, Case{"vllm", "pensieve"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.policy) + "_" + info.param.eviction;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace seer
