// A conversation's life in the engine (docs/pensieve.md): turns continue the cached
// history, an idle one expires before its next turn is looked up, and DELETE
// forgets it, also while one of its turns is waiting or running. Time is a VirtualClock the test moves; the FakeExecutor checks that
// every reused K/V slot holds its token, and the invariant checkers run after every
// step.
#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "common/error.h"
#include "engine/engine.h"
#include "engine/fake_executor.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

constexpr double kTtl = 10;

struct Turn {
  int32_t prompt_len = 0;  // as the engine built it: history + new message
  int32_t history_len = 0;
  int32_t output_len = 0;
  int32_t max_tokens = 0;
};

class TurnRecorder : public EngineObserver {
 public:
  void on_finished(const Request& r) override {
    last = {r.prompt_len(), r.conversation_history_len, r.num_output(), r.sampling.max_tokens};
  }
  Turn last;
};

struct Chat {
  explicit Chat(const std::string& policy = "pensieve", bool prefix_reuse = false)
      : kc{16, 64, 32, 100}, kv(kc), executor(kc, 1000) {
    SchedulerConfig sc;
    sc.policy = policy;
    scheduler = make_scheduler(sc);
    ConversationCacheConfig cc;
    cc.keep_kv = policy_info(policy).caches_conversations;
    cc.host_tier = policy_info(policy).cache_host_tier;
    cc.idle_expiry_s = kTtl;
    cc.prefix_reuse = prefix_reuse;
    scheduler->conversations().attach(std::make_unique<ConversationCache>(kv, cc));
    cache = scheduler->conversations().cache();
    EngineConfig ec;
    ec.check_invariants = true;
    engine = std::make_unique<Engine>(*scheduler, executor, kv, clock, ec);
    engine->set_observer(&recorder);
  }

  RequestId send(const std::string& conversation, int32_t new_tokens, int32_t output, int32_t seed) {
    Request r;
    for (int32_t i = 0; i < new_tokens; ++i) r.prompt_tokens.push_back((seed * 37 + i * 11) % 997 + 1);
    r.conversation = conversation;
    r.continues_conversation = true;
    r.sampling.max_tokens = output;
    r.forced_output_len = output;
    return engine->add_request(std::move(r));
  }

  Turn run_turn(const std::string& conversation, int32_t new_tokens, int32_t output, int32_t seed) {
    send(conversation, new_tokens, output, seed);
    finish();
    return recorder.last;
  }

  void finish() {
    for (int i = 0; i < 10000 && engine->has_unfinished(); ++i) engine->step();
    ASSERT_FALSE(engine->has_unfinished());
  }

  int64_t hits() const { return cache->counters().hit_tokens_device + cache->counters().hit_tokens_host; }

  KvConfig kc;
  KvManager kv;
  VirtualClock clock;  // moved by the test only: the FakeExecutor is not simulated
  testing::FakeExecutor executor;
  std::unique_ptr<Scheduler> scheduler;
  const ConversationCache* cache = nullptr;  // the scheduler's
  TurnRecorder recorder;
  std::unique_ptr<Engine> engine;
};

TEST(ConversationLifecycle, AReturningTurnWithinTheTtlContinuesTheHistory) {
  Chat chat;
  Turn first = chat.run_turn("c", 20, 8, 1);
  EXPECT_EQ(first.history_len, 0);
  chat.clock.advance(kTtl - 1);
  Turn second = chat.run_turn("c", 12, 4, 2);
  EXPECT_EQ(second.history_len, first.prompt_len + first.output_len);
  EXPECT_EQ(second.prompt_len, second.history_len + 12);
  EXPECT_GT(chat.hits(), 0);
}

// Prefix reuse: the same prompt sent again finds all of it cached, yet its last
// token is computed again, since the first output token is sampled from it.
TEST(ConversationLifecycle, AResentIdenticalPromptReusesAllButItsLastToken) {
  Chat chat("pensieve", /*prefix_reuse=*/true);
  Turn first = chat.run_turn("", 40, 4, 7);
  EXPECT_EQ(chat.hits(), 0);
  Turn again = chat.run_turn("", 40, 4, 7);
  EXPECT_EQ(again.prompt_len, first.prompt_len);
  EXPECT_EQ(again.output_len, 4);
  EXPECT_EQ(chat.hits(), 39);
}

TEST(ConversationLifecycle, AnIdleConversationExpiresBeforeItsNextTurnIsLookedUp) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  ASSERT_TRUE(chat.cache->contains("c"));
  // Nothing ran in between (an idle server): expiry must still apply to this turn.
  chat.clock.advance(kTtl + 1);
  // Its next turn is told (conversation_not_found), once; then the id starts afresh.
  try {
    (void)chat.run_turn("c", 12, 4, 2);
    ADD_FAILURE() << "an expired conversation's turn was not refused";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), "conversation_not_found") << e.what();
  }
  Turn second = chat.run_turn("c", 12, 4, 2);
  EXPECT_EQ(second.history_len, 0) << "an expired conversation was continued";
  EXPECT_EQ(second.prompt_len, 12);
  EXPECT_EQ(chat.hits(), 0) << "an expired conversation's KV was reused";
  // The new turn starts the conversation afresh.
  EXPECT_EQ(chat.cache->history("c").size(), 12u + 4u);
}

TEST(ConversationLifecycle, DeletingAnExpiredConversationFindsNothing) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  chat.clock.advance(kTtl + 1);
  EXPECT_FALSE(chat.engine->delete_conversation("c"));
  EXPECT_EQ(chat.kv.usage().device.used(), 0);
}

TEST(ConversationLifecycle, DeleteForgetsACachedConversationOnce) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  EXPECT_GT(chat.kv.usage().device.used(), 0);
  EXPECT_TRUE(chat.engine->delete_conversation("c"));
  EXPECT_FALSE(chat.engine->delete_conversation("c"));
  EXPECT_FALSE(chat.engine->delete_conversation("never-seen"));
  EXPECT_EQ(chat.kv.usage().device.used(), 0);
  Turn next = chat.run_turn("c", 12, 4, 2);
  EXPECT_EQ(next.history_len, 0);
}

// The running turn holds the conversation's KV (the entry left the cache when it
// was attached): DELETE still succeeds, the turn finishes normally, and its KV is
// freed instead of becoming the conversation again.
TEST(ConversationLifecycle, DeleteDuringARunningTurnFreesItsKvWhenItFinishes) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  chat.send("c", 12, 30, 2);
  for (int i = 0; i < 3; ++i) chat.engine->step();
  ASSERT_EQ(chat.engine->num_running(), 1u);
  ASSERT_FALSE(chat.cache->contains("c")) << "the running turn should hold the entry";
  ASSERT_GT(chat.hits(), 0);
  EXPECT_TRUE(chat.engine->delete_conversation("c"));
  EXPECT_FALSE(chat.engine->delete_conversation("c")) << "deleted twice";
  chat.finish();
  EXPECT_EQ(chat.recorder.last.output_len, 30) << "the running turn was cut short";
  EXPECT_FALSE(chat.cache->contains("c"));
  EXPECT_EQ(chat.cache->num_conversations(), 0u);
  EXPECT_EQ(chat.kv.usage().device.used(), 0);
  EXPECT_EQ(chat.kv.usage().host.used(), 0);
  EXPECT_EQ(chat.kv.usage().cache_tables, 0u);
  EXPECT_EQ(chat.run_turn("c", 12, 4, 3).history_len, 0);
}

TEST(ConversationLifecycle, DeleteOfAWaitingTurnsConversationForgetsBoth) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  chat.send("c", 12, 6, 2);  // queued with the history prepended, not admitted yet
  EXPECT_TRUE(chat.engine->delete_conversation("c"));
  chat.finish();
  EXPECT_EQ(chat.recorder.last.output_len, 6);
  EXPECT_EQ(chat.cache->num_conversations(), 0u);
  EXPECT_EQ(chat.kv.usage().device.used(), 0);
}

// A turn sent after the DELETE starts the conversation afresh, even while the
// deleted one is still running; it alone defines the conversation afterwards.
TEST(ConversationLifecycle, ATurnSentAfterTheDeleteStartsAfresh) {
  Chat chat;
  chat.run_turn("c", 20, 8, 1);
  chat.send("c", 12, 30, 2);
  for (int i = 0; i < 3; ++i) chat.engine->step();
  ASSERT_TRUE(chat.engine->delete_conversation("c"));
  chat.send("c", 10, 5, 3);
  chat.finish();
  EXPECT_EQ(chat.cache->history("c").size(), 10u + 5u);
  EXPECT_EQ(chat.cache->num_conversations(), 1u);
  EXPECT_TRUE(chat.engine->delete_conversation("c"));
  EXPECT_EQ(chat.kv.usage().device.used(), 0);
}

// One definition of recomputed tokens for every policy (docs/pensieve.md, Metrics):
// each turn's history minus what it reused. A stateless server recomputes it all.
TEST(ConversationLifecycle, RecomputedTokensAreTheHistoryNotReused) {
  for (const char* policy : {"pensieve", "pensieve-gpu", "vllm"}) {
    Chat chat(policy);
    Turn first = chat.run_turn("c", 20, 8, 1);
    Turn second = chat.run_turn("c", 12, 4, 2);
    const CacheCounters& c = chat.cache->counters();
    EXPECT_EQ(c.lookup_tokens, first.prompt_len + second.prompt_len) << policy;
    EXPECT_EQ(c.history_tokens, second.history_len) << policy;
    EXPECT_EQ(c.recomputed_tokens, c.history_tokens - chat.hits()) << policy;
    if (std::string(policy) == "vllm") {
      EXPECT_EQ(chat.hits(), 0);
      EXPECT_EQ(c.recomputed_tokens, 20 + 8);
    } else {
      // K/V exist for all of the history but its last token (sampled, never fed back).
      EXPECT_EQ(c.recomputed_tokens, 1) << policy;
    }
  }
}

// A chat turn without max_tokens: the server sized it from the new message alone; the
// engine, which prepends the history, gives it the context that is left.
TEST(ConversationLifecycle, ATurnWithoutMaxTokensGetsTheContextLeftAfterItsHistory) {
  Chat chat;
  const Turn first = chat.run_turn("c", 40, 8, 1);
  const int32_t limit = chat.engine->max_request_tokens();
  Request r;
  for (int32_t i = 0; i < 10; ++i) r.prompt_tokens.push_back(i + 1);
  r.conversation = "c";
  r.continues_conversation = true;
  r.sampling.max_tokens = limit - 10;  // what the server could compute
  r.max_tokens_fill_context = true;
  r.forced_output_len = 4;
  chat.engine->add_request(std::move(r));
  chat.finish();
  EXPECT_EQ(chat.recorder.last.prompt_len, first.prompt_len + first.output_len + 10);
  EXPECT_EQ(chat.recorder.last.max_tokens, limit - chat.recorder.last.prompt_len);
}

}  // namespace
}  // namespace seer
