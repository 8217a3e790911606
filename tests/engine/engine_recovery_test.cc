// An invariant failure costs the requests in flight, not the engine: after step()
// throws, recover() ends every live request with an error, rebuilds empty queues,
// KV pools and cache, and the engine serves new requests exactly as a fresh one.
#include <gtest/gtest.h>

#include "engine/engine_harness.h"

namespace seer {
namespace {

using testing::EngineHarness;
using testing::make_prompt;

// Requests sharing a long prefix (prefix reuse) in several conversations, so the
// cache holds entries when the failure hits.
void add_work(EngineHarness& h, const std::string& tag, int n) {
  for (int i = 0; i < n; ++i) {
    Request r;
    r.external_id = tag + std::to_string(i);
    r.prompt_tokens = make_prompt(40, 7);
    const auto tail = make_prompt(5 + i % 7, 100 + i);
    r.prompt_tokens.insert(r.prompt_tokens.end(), tail.begin(), tail.end());
    r.sampling.max_tokens = 12;
    r.forced_output_len = 4 + i % 9;
    r.conversation = i % 3 == 0 ? "" : "conv-" + std::to_string(i % 4);
    r.continues_conversation = !r.conversation.empty();
    r.arrival_s = h.engine->clock().now();
    (void)h.engine->add_request(std::move(r));
  }
}

EngineHarness make_harness(const std::string& policy) {
  SchedulerConfig sc;
  sc.policy = policy;
  sc.max_batch_size = 6;
  sc.token_budget = 48;
  ConversationCacheConfig cc;
  cc.prefix_reuse = true;
  cc.host_tier = policy_info(policy).cache_host_tier;
  EngineConfig ec;
  ec.max_model_len = 512;
  return EngineHarness(sc, KvConfig{4, 40, 40, 32}, ec, 1000, false, cc);
}

TEST(EngineRecovery, AStepThatThrowsCostsItsRequestsAndTheEngineServesOnAsIfFresh) {
  for (const std::string policy : {"vllm", "sarathi", "pensieve", "seer", "ecoserve"}) {
    SCOPED_TRACE(policy);
    EngineHarness h = make_harness(policy);
    add_work(h, "a", 12);
    for (int i = 0; i < 6; ++i) h.engine->step();  // some running, some cached, some waiting
    const size_t live = h.engine->requests().size();
    ASSERT_GT(live, 0u);
    // Corrupt the state behind the scheduler's back: a running request loses its KV.
    RequestId victim = -1;
    for (const auto& [id, r] : h.engine->requests())
      if (r->state == RequestState::Running && h.kv.has(id)) victim = id;
    ASSERT_GE(victim, 0);
    h.kv.free(victim);
    EXPECT_THROW(h.engine->step(), std::exception);  // the executor or the invariant checker notices

    const size_t finished_before = h.observer.finished.size();
    EXPECT_EQ(h.engine->recover("engine failure: test"), live);
    EXPECT_EQ(h.observer.finished.size(), finished_before + live);
    EXPECT_EQ(h.observer.duplicate_finishes, 0);
    size_t errors = 0;
    for (const auto& [id, f] : h.observer.finished) errors += f.reason == FinishReason::Error;
    EXPECT_EQ(errors, live);
    EXPECT_FALSE(h.engine->has_unfinished());
    EXPECT_EQ(h.kv.usage().device.used(), 0);
    EXPECT_EQ(h.kv.usage().host.used(), 0);
    EXPECT_EQ(h.cache->num_conversations(), 0u);
    EXPECT_EQ(h.engine->counters().recoveries, 1);

    // New work after the recovery produces what a fresh engine produces.
    add_work(h, "b", 12);
    ASSERT_TRUE(h.run());
    EngineHarness fresh = make_harness(policy);
    add_work(fresh, "b", 12);
    ASSERT_TRUE(fresh.run());
    for (const auto& [id, f] : fresh.observer.finished) {
      ASSERT_TRUE(h.observer.finished.count(id)) << id;
      EXPECT_EQ(h.observer.finished.at(id).tokens, f.tokens) << id;
      EXPECT_EQ(h.observer.finished.at(id).reason, f.reason) << id;
    }
  }
}

TEST(EngineRecovery, TheStateDumpNamesEveryLiveRequestAndThePools) {
  EngineHarness h = make_harness("pensieve");
  add_work(h, "a", 5);
  h.engine->step();
  const std::string dump = h.engine->state_dump();
  EXPECT_NE(dump.find("engine state: 5 requests"), std::string::npos) << dump;
  EXPECT_NE(dump.find("device blocks"), std::string::npos) << dump;
  EXPECT_NE(dump.find("cache:"), std::string::npos) << dump;
  for (const auto& [id, r] : h.engine->requests())
    EXPECT_NE(dump.find("'" + r->external_id + "'"), std::string::npos) << dump;
}

}  // namespace
}  // namespace seer
