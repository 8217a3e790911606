// Randomized multi-turn runs of the stateful policies under memory pressure, with
// the KV, queue and conversation-cache invariants audited after every step: every
// turn finishes once with its trace's output length after its whole history, none
// is rejected, history KV is reused, and recomputed tokens are the history not
// reused.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <set>
#include <string>

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
  const testing::ConversationShape shape;
  for (uint64_t seed : {1u, 2u, 3u}) {
    auto trace = testing::random_conversations(seed, 40, shape);
    SimSetup s = testing::small_setup(GetParam().policy, /*kv_tokens=*/6000);
    s.swap_space_gib = 1;  // a host tier a third of the device tier: drops happen too
    s.eviction = GetParam().eviction;
    s.max_tokens = 256;
    // The engine runs the KV, queue and conversation-cache invariant checkers after
    // every step and throws on the first violation.
    ASSERT_TRUE(s.check_invariants);
    // No turn may be rejected or cut: a whole conversation (its last prompt plus
    // max_tokens) fits the context, which fits the KV pool, and every true output
    // is below max_tokens.
    ASSERT_LE(shape.max_turns * (shape.max_prompt + shape.max_output) + s.max_tokens, s.max_model_len);
    ASSERT_LE(s.max_model_len, 6000);
    ASSERT_LT(shape.max_output, s.max_tokens);
    SimResult r = run_simulation(s, trace);
    EXPECT_EQ(r.rejected, 0) << "seed " << seed;
    EXPECT_EQ(r.truncated, 0) << "seed " << seed;
    ASSERT_EQ(r.records.size(), trace.size()) << "seed " << seed;

    // Every turn finishes once, with its trace's output length, after a prompt that
    // re-sends every earlier prompt and answer of its conversation.
    std::map<std::string, const TraceEntry*> by_id;
    std::map<std::string, int32_t> context;  // per conversation, in turn order
    std::map<std::string, int32_t> expected_prompt;
    for (const TraceEntry& e : trace) {
      by_id[e.id] = &e;
      int32_t& ctx = context[e.conversation];
      expected_prompt[e.id] = ctx + e.prompt_len();
      ctx += e.prompt_len() + e.output_tokens;
    }
    int64_t history = 0;
    std::set<std::string> seen;
    for (const auto& rec : r.records) {
      ASSERT_TRUE(by_id.count(rec.id)) << rec.id;
      EXPECT_TRUE(seen.insert(rec.id).second) << rec.id << " finished twice";
      EXPECT_EQ(rec.output_tokens, by_id[rec.id]->output_tokens) << rec.id << ", seed " << seed;
      EXPECT_EQ(rec.prompt_tokens, expected_prompt[rec.id]) << rec.id << ", seed " << seed;
      history += rec.prompt_tokens - by_id[rec.id]->prompt_len();
    }

    ASSERT_TRUE(r.summary.cache.has_value());
    const CacheCounters& c = *r.summary.cache;
    const int64_t hits = c.hit_tokens_device + c.hit_tokens_host;
    EXPECT_EQ(c.history_tokens, history) << "seed " << seed;
    EXPECT_EQ(c.recomputed_tokens, history - hits) << "seed " << seed;
    if (std::string(GetParam().policy) == "vllm") {
      EXPECT_EQ(hits, 0);
      EXPECT_GT(c.recomputed_tokens, 0);
    } else {
      EXPECT_GT(hits, 0) << "seed " << seed;
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
