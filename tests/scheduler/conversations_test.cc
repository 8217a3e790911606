// The conversation cache's hooks on the scheduler (scheduler/conversations.h): one
// builder for serve and sim, the arrival hook that prepends a history, the finish
// hook that keeps or frees a turn's KV, and the shared-tier restore that assembles
// the prompt the request will have.
#include <gtest/gtest.h>

#include <numeric>

#include "common/error.h"
#include "kv/shared_kv_tier.h"
#include "scheduler/conversations.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

constexpr int32_t kBlock = 16;

std::vector<int32_t> tokens(int32_t n, int32_t first = 1) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

KvConfig kv_config() { return KvConfig{kBlock, 32, 32, 100}; }

TEST(MakeConversationCache, StatelessPoliciesGetHistoriesOnlyWhenAsked) {
  KvManager kv(kv_config());
  ConversationCacheSetup sim;
  EXPECT_EQ(make_conversation_cache(policy_info("vllm"), kv, sim), nullptr);
  ConversationCacheSetup serve;
  serve.histories_when_stateless = true;
  auto histories = make_conversation_cache(policy_info("vllm"), kv, serve);
  ASSERT_NE(histories, nullptr);
  EXPECT_FALSE(histories->config().keep_kv);
  serve.prefix_reuse = true;
  EXPECT_TRUE(make_conversation_cache(policy_info("vllm"), kv, serve)->config().keep_kv);
  auto pensieve = make_conversation_cache(policy_info("pensieve"), kv, sim);
  ASSERT_NE(pensieve, nullptr);
  EXPECT_TRUE(pensieve->config().keep_kv);
  EXPECT_TRUE(pensieve->config().host_tier);
  EXPECT_FALSE(make_conversation_cache(policy_info("pensieve-gpu"), kv, sim)->config().host_tier);
  sim.eviction = "nonsense";
  EXPECT_THROW(make_conversation_cache(policy_info("pensieve"), kv, sim), Error);
}

// A finished turn (its prompt and answer, all computed) as the engine hands it over.
Request finished_turn(RequestId id, const std::string& conversation, std::vector<int32_t> prompt, int32_t answer,
                      FinishReason reason) {
  Request r;
  r.id = id;
  r.conversation = conversation;
  r.prompt_tokens = std::move(prompt);
  r.output_tokens = tokens(answer, 500);
  r.finish_reason = reason;
  r.num_computed_tokens = r.num_tokens() - 1;  // the last sampled token has no K/V yet
  return r;
}

struct Stack {
  explicit Stack(const std::string& policy = "pensieve", bool histories = false) : kv(kv_config()) {
    ConversationCacheSetup s;
    s.histories_when_stateless = histories;
    conversations.attach(make_conversation_cache(policy_info(policy), kv, s));
  }
  // Runs `r` to its end: its KV allocated as if computed, then released.
  void finish(const Request& r) {
    ASSERT_TRUE(kv.allocate(r.id, r.num_computed_tokens));
    conversations.release(r, kv, 1.0);
    kv.check_invariants();
    conversations.check_invariants();
  }
  KvManager kv;
  Conversations conversations;
};

TEST(Conversations, ACompletedTurnBecomesTheHistoryTheNextTurnContinues) {
  Stack s;
  s.finish(finished_turn(1, "c", tokens(40), 10, FinishReason::Stop));
  EXPECT_EQ(s.kv.usage().request_tables, 0u);
  ASSERT_NE(s.conversations.cache(), nullptr);
  EXPECT_EQ(s.conversations.cache()->history("c").size(), 50u);

  Request next;
  next.conversation = "c";
  next.continues_conversation = true;
  next.prompt_tokens = {900, 901, 902};
  s.conversations.arrive(next, 2.0);
  EXPECT_EQ(next.prompt_len(), 53);
  EXPECT_EQ(next.conversation_history_len, 50);
  EXPECT_EQ(next.prompt_tokens[49], 509);  // the answer's last token
  EXPECT_EQ(next.prompt_tokens[50], 900);

  // fresh_start_tokens: the client re-sent that much of its own prompt; it is skipped.
  Request again = next;
  again.prompt_tokens = {7, 900};
  again.fresh_start_tokens = 1;
  again.conversation_history_len = 0;
  s.conversations.arrive(again, 2.0);
  EXPECT_EQ(again.prompt_len(), 51);
  EXPECT_EQ(again.prompt_tokens.back(), 900);
}

TEST(Conversations, ATurnThatDoesNotContinueKeepsItsPromptAndAGivenHistoryLength) {
  Stack s;
  s.finish(finished_turn(1, "c", tokens(40), 10, FinishReason::Stop));
  Request replay;  // a trace replay: the prompt already holds the history
  replay.conversation = "c";
  replay.prompt_tokens = tokens(60);
  replay.conversation_history_len = 99;  // clamped to the prompt
  s.conversations.arrive(replay, 2.0);
  EXPECT_EQ(replay.prompt_len(), 60);
  EXPECT_EQ(replay.conversation_history_len, 60);
}

TEST(Conversations, AnAbortedTurnHandsBackOnlyTheHistoryItStartedFrom) {
  Stack s;
  Request r = finished_turn(1, "c", tokens(40), 10, FinishReason::Abort);
  r.conversation_history_len = 32;
  s.finish(r);
  EXPECT_EQ(s.conversations.cache()->history("c").size(), 32u);
  // A deleted conversation's turn leaves nothing.
  Request gone = finished_turn(2, "d", tokens(40), 10, FinishReason::Stop);
  gone.conversation_deleted = true;
  s.finish(gone);
  EXPECT_FALSE(s.conversations.cache()->contains("d"));
  EXPECT_EQ(s.kv.usage().device.used(), s.conversations.cache()->blocks(KvTier::Device));
}

TEST(Conversations, WithoutACacheEveryHookIsAStatelessServers) {
  Stack s("vllm");
  EXPECT_EQ(s.conversations.cache(), nullptr);
  s.finish(finished_turn(1, "c", tokens(40), 10, FinishReason::Stop));
  EXPECT_EQ(s.kv.usage().device.used(), 0);
  Request next;
  next.conversation = "c";
  next.continues_conversation = true;
  next.prompt_tokens = {900};
  s.conversations.arrive(next, 2.0);
  EXPECT_EQ(next.prompt_len(), 1);
  EXPECT_FALSE(s.conversations.forget("c", 2.0));
  EXPECT_FALSE(s.conversations.wants_shared("c", 2.0));
  EXPECT_EQ(s.conversations.restore_shared(next, {}, 2.0), 0);
  EXPECT_EQ(s.conversations.describe(), "");
}

TEST(Conversations, AServerKeepsHistoriesUnderAStatelessPolicyAndFreesTheKv) {
  Stack s("vllm", /*histories=*/true);
  s.finish(finished_turn(1, "c", tokens(40), 10, FinishReason::Stop));
  EXPECT_EQ(s.kv.usage().device.used(), 0);
  EXPECT_EQ(s.conversations.cache()->history("c").size(), 50u);
  EXPECT_TRUE(s.conversations.forget("c", 2.0));
  EXPECT_FALSE(s.conversations.forget("c", 2.0));
}

// A continuing turn arriving at a replica that has never seen its conversation:
// the restore covers the prompt the turn will have (the tier's history + the new
// message), and the history is adopted so arrive() prepends it.
TEST(Conversations, ASharedTierRestoreCoversTheHistoryBeforeTheNewMessage) {
  SharedKvTier shared(10, kBlock);
  const auto history = tokens(70);
  shared.store("c", history, 70);
  KvManager kv(kv_config());
  ConversationCacheSetup setup;
  setup.shared = &shared;
  Conversations conversations;
  conversations.attach(make_conversation_cache(policy_info("pensieve"), kv, setup));

  Request r;
  r.conversation = "c";
  r.continues_conversation = true;
  r.prompt_tokens = {900, 901};
  EXPECT_TRUE(conversations.wants_shared("c", 1.0));
  EXPECT_EQ(conversations.shared_restorable(r), 0) << "without the stored history the prompt is only the message";
  EXPECT_EQ(conversations.restore_shared(r, shared.history("c"), 1.0), 64);
  EXPECT_EQ(kv.usage().host.used(), 4);
  conversations.check_invariants();
  EXPECT_FALSE(conversations.wants_shared("c", 1.0)) << "the replica now holds the stored KV";
  conversations.arrive(r, 1.0);
  EXPECT_EQ(r.prompt_len(), 72);
  EXPECT_EQ(r.conversation_history_len, 70);

  // Nothing stored for another conversation: its history (the caller's) is adopted.
  Request other;
  other.conversation = "d";
  other.continues_conversation = true;
  other.prompt_tokens = {5};
  const auto stored = tokens(20, 300);
  EXPECT_EQ(conversations.restore_shared(other, stored, 2.0), 0);
  conversations.arrive(other, 2.0);
  EXPECT_EQ(other.prompt_len(), 21);
  EXPECT_EQ(other.prompt_tokens.front(), 300);
}

}  // namespace
}  // namespace seer
