// Random traces through the engine for every preset and preemption mode, with the
// invariant checkers after every step (EngineConfig::check_invariants): every
// request finishes with the tokens it produces alone, and the pools end empty.
#include <random>

#include <gtest/gtest.h>

#include "engine/engine_harness.h"
#include "predict/length_predictor.h"

namespace seer {
namespace {

using testing::EngineHarness;
using testing::make_prompt;

struct Spec {
  std::string id;
  int32_t prompt_len, seed, max_tokens, forced;
  int arrival_step;
};

std::vector<Spec> random_trace(uint32_t seed) {
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  std::vector<Spec> v;
  int step = 0;
  for (int i = 0; i < 24; ++i) {
    step += uniform(0, 4);
    int32_t max_tokens = uniform(1, 30);
    v.push_back({"r" + std::to_string(i), uniform(1, 40), uniform(0, 1000), max_tokens, uniform(1, max_tokens), step});
  }
  return v;
}

std::map<std::string, testing::Finished> run(const SchedulerConfig& sc, const KvConfig& kc, const std::vector<Spec>& trace,
                                            EngineCounters* counters = nullptr, LengthPredictor* predictor = nullptr,
                                            std::optional<ConversationCacheConfig> cache = std::nullopt,
                                            CacheCounters* cache_counters = nullptr) {
  EngineConfig ec;
  ec.predictor = predictor;
  EngineHarness h(sc, kc, ec, 1000, /*simulated=*/true, cache);
  size_t next = 0;
  for (int step = 0; step < 100000 && (next < trace.size() || h.engine->has_unfinished()); ++step) {
    while (next < trace.size() && trace[next].arrival_step <= step) {
      const Spec& s = trace[next++];
      h.add(s.id, make_prompt(s.prompt_len, s.seed), s.max_tokens, s.forced);
    }
    h.engine->step();
  }
  EXPECT_FALSE(h.engine->has_unfinished()) << h.engine->state_dump();
  if (h.cache) {
    if (cache_counters) *cache_counters = h.cache->counters();
    h.cache->expire(1e18);  // what the cache kept goes too: nothing leaked
  }
  EXPECT_EQ(h.kv.usage().device.free, kc.device_blocks);
  EXPECT_EQ(h.kv.usage().host.free, kc.host_blocks);
  if (counters) *counters = h.engine->counters();
  return h.observer.finished;
}

TEST(EngineRandomTraces, EveryPolicyGivesEveryRequestItsOwnTokens) {
  int64_t preemptions = 0;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    auto trace = random_trace(seed);
    SchedulerConfig big;
    big.policy = "orca";
    auto reference = run(big, KvConfig{4, 2048, 0, 32}, trace);
    ASSERT_EQ(reference.size(), trace.size());
    for (std::string p : {"static", "orca", "vllm", "sarathi"}) {
      for (PreemptionMode m : {PreemptionMode::Recompute, PreemptionMode::Swap}) {
        SCOPED_TRACE(p + (m == PreemptionMode::Swap ? " swap" : " recompute") + " seed " + std::to_string(seed));
        SchedulerConfig sc;
        sc.policy = p;
        sc.preemption = m;
        sc.max_batch_size = 6;
        sc.token_budget = 48;
        EngineCounters counters;
        auto got = run(sc, KvConfig{4, 20, 40, 32}, trace, &counters);
        preemptions += counters.preemptions;
        ASSERT_EQ(got.size(), trace.size());
        for (const auto& [id, f] : got) {
          EXPECT_EQ(f.tokens, reference.at(id).tokens) << id;
          EXPECT_EQ(f.reason, FinishReason::Length) << id;
        }
      }
    }
  }
  EXPECT_GT(preemptions, 0);
}

// Predictions that are often wrong: a third exact, a third too short, a third too long.
class SkewedPredictor final : public LengthPredictor {
 public:
  std::string name() const override { return "skewed"; }
  LengthPrediction predict(const LengthQuery& q) override {
    const int32_t n = q.true_output_len;
    const int32_t k = static_cast<int32_t>(calls_++ % 3);
    return LengthPrediction{0, k == 0 ? n : k == 1 ? n / 3 : 2 * n};
  }

 private:
  int64_t calls_ = 0;
};

TEST(EngineRandomTraces, EcoServeVariantsGiveEveryRequestItsOwnTokens) {
  int64_t held = 0;
  for (uint32_t seed = 1; seed <= 20; ++seed) {
    auto trace = random_trace(seed);
    SchedulerConfig big;
    big.policy = "orca";
    auto reference = run(big, KvConfig{4, 2048, 0, 32}, trace);
    for (std::string p : {"ecoserve-d", "ecoserve-sd", "ecoserve-sdo", "ecoserve"}) {
      SCOPED_TRACE(p + " seed " + std::to_string(seed));
      SchedulerConfig sc;
      sc.policy = p;
      sc.max_batch_size = 6;
      sc.token_budget = 48;
      SkewedPredictor predictor;
      EngineCounters counters;
      auto got = run(sc, KvConfig{4, 20, 40, 32}, trace, &counters, &predictor);
      held += counters.preemptions_held;
      ASSERT_EQ(got.size(), trace.size());
      for (const auto& [id, f] : got) EXPECT_EQ(f.tokens, reference.at(id).tokens) << id;
    }
  }
  EXPECT_GT(held, 0);
}

// Prefix caching (on by default in `seer serve`) under every preset: finished
// requests leave their K/V cached, which fills the small pool; cached blocks must
// count as free for every policy's admission (ScheduleSession::free_or_cached_blocks),
// or a policy that sizes its admissions from the free pool stops admitting (ecoserve,
// s3's first fit). Half the prompts repeat an earlier one, so hits happen too.
void every_policy_with_prefix_caching(const KvConfig& kv, const std::vector<PreemptionMode>& modes, uint32_t seeds) {
  int64_t hits = 0, preemptions = 0;
  for (uint32_t seed = 1; seed <= seeds; ++seed) {
    auto trace = random_trace(seed);
    for (size_t i = 1; i < trace.size(); i += 2) {
      trace[i].prompt_len = trace[i - 1].prompt_len;
      trace[i].seed = trace[i - 1].seed;
    }
    SchedulerConfig big;
    big.policy = "orca";
    auto reference = run(big, KvConfig{4, 2048, 0, 32}, trace);
    for (const PolicyInfo& info : scheduler_policies()) {
      for (PreemptionMode m : modes) {
        SCOPED_TRACE(info.name + (m == PreemptionMode::Swap ? " swap" : " recompute") + " seed " +
                     std::to_string(seed));
        SchedulerConfig sc;
        sc.policy = info.name;
        sc.preemption = m;
        sc.max_batch_size = 6;
        sc.token_budget = 48;
        ConversationCacheConfig cc;
        cc.prefix_reuse = true;
        cc.host_tier = info.cache_host_tier;
        cc.idle_expiry_s = 1e9;  // expired only at the end, to check that nothing leaked
        SkewedPredictor predictor;
        CacheCounters counters;
        EngineCounters engine_counters;
        auto got = run(sc, kv, trace, &engine_counters, &predictor, cc, &counters);
        ASSERT_EQ(got.size(), trace.size()) << "a policy stopped admitting while cached blocks filled the pool";
        for (const auto& [id, f] : got) EXPECT_EQ(f.tokens, reference.at(id).tokens) << id;
        hits += counters.hit_tokens_device + counters.hit_tokens_host;
        preemptions += engine_counters.preemptions;
      }
    }
  }
  EXPECT_GT(hits, 0);
  if (modes.size() > 1) {
    EXPECT_GT(preemptions, 0);
  }
}

TEST(EngineRandomTraces, WithPrefixCachingEveryPolicyGivesEveryRequestItsOwnTokens) {
  every_policy_with_prefix_caching(KvConfig{4, 20, 40, 32}, {PreemptionMode::Recompute}, 12);
}

// The same with sliding-window layer groups (kv/kv_layer_groups.h; block size 4, one
// global and two local groups, window 6) under both preemption modes: trimmed blocks
// leave every table, every chunk still finds each block its windows read (the fake
// executor reads them back) and the pools end empty.
TEST(EngineRandomTraces, WithSlidingWindowGroupsEveryPolicyGivesEveryRequestItsOwnTokens) {
  every_policy_with_prefix_caching(KvConfig{4, 60, 120, 32, 3, 2, 6},
                                   {PreemptionMode::Recompute, PreemptionMode::Swap}, 8);
}

}  // namespace
}  // namespace seer
