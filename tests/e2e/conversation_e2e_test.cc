// Conversations over the API with the official `openai` npm client (tests/e2e/node/
// conversation_client.mjs; install with `npm ci --prefix tests/e2e/node`), see
// docs/pensieve.md: a client holding a conversation sends only its new messages and
// gets the same greedy answers as from a server that recomputes the history; a
// stateless client re-sending the chat reuses the cached history with
// --prefix-reuse; a client that disconnects mid-turn leaves the earlier turns cached
// and no KV behind. Skips when node or the package is missing.
#include <chrono>
#include <cmath>
#include <thread>

#include <gtest/gtest.h>

#include "e2e/node_client.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"

namespace seer::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

constexpr int kBlockSize = 16;  // seer serve's default --block-size

class ConversationE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    SEER_REQUIRE_NODE_PACKAGES("openai");
  }

  // Runs the client in `mode` and returns what it printed.
  json client(const std::string& mode, const ServerProcess& s, const std::string& conversation = "conv-a") {
    json j = run_node_client("conversation_client.mjs", {mode, s.url(), "tiny-random", conversation});
    return j.is_null() ? json::object() : j;
  }
};

double hits(const ServerProcess& s) {
  return metric(s.port(), "seer_cache_hit_tokens_total{tier=\"device\"}").value_or(0) +
         metric(s.port(), "seer_cache_hit_tokens_total{tier=\"host\"}").value_or(0);
}

// Waits (e2e/wait.h) until /metrics shows `series` == value; returns the last value seen.
double wait_metric(const ServerProcess& s, const std::string& series, double value) {
  return wait_for_metric_eq(s.port(), series, value).value_or(-1);
}

int prompt_tokens(const json& turn) { return turn["usage"]["prompt_tokens"].get<int>(); }
int cached_tokens(const json& turn) { return turn["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(); }
// usage without prompt_tokens_details: a cached and a recomputed turn count the same
// tokens, and only the cached one reports cached tokens.
json usage_counts(const json& turn) {
  json u = turn["usage"];
  u.erase("prompt_tokens_details");
  return u;
}
int completion_tokens(const json& turn) { return turn["usage"]["completion_tokens"].get<int>(); }

TEST_F(ConversationE2e, ClientHoldsAConversationWithTheSameAnswersAsRecomputing) {
  // Conversation ids only: no prefix reuse on either (the stateless one recomputes).
  ServerProcess stateful(tiny_model(), {"--served-model-name", "tiny-random", "--trust-client-conversation-ids", "--policy", "pensieve", "--no-prefix-reuse"});
  ServerProcess stateless(tiny_model(), {"--served-model-name", "tiny-random", "--trust-client-conversation-ids", "--policy", "vllm", "--no-prefix-reuse"});
  ASSERT_TRUE(stateful.up() && stateless.up());
  json a = client("hold", stateful), b = client("hold", stateless);
  ASSERT_TRUE(a.contains("after") && b.contains("after"));

  // The second turn carries the first turn's history: its prompt and answer, plus the
  // new message without its BOS.
  const int bos = 1;
  EXPECT_EQ(prompt_tokens(a["turn2"]),
            prompt_tokens(a["turn1"]) + completion_tokens(a["turn1"]) + prompt_tokens(a["alone"]) - bos);
  // Reused KV never changes the output: the stateless policy recomputes the history.
  for (const char* t : {"turn1", "turn2"}) {
    ASSERT_EQ(a[t]["tokens"].size(), 8u) << a.dump();
    EXPECT_EQ(a[t]["tokens"], b[t]["tokens"]) << t;
    EXPECT_EQ(a[t]["content"], b[t]["content"]) << t;
    EXPECT_EQ(usage_counts(a[t]), usage_counts(b[t])) << t;
    EXPECT_EQ(cached_tokens(b[t]), 0) << t;
  }
  EXPECT_EQ(cached_tokens(a["turn2"]), hits(stateful));  // the client sees the hits
  EXPECT_NE(a["turn2"]["tokens"], a["alone"]["tokens"]);  // the history matters
  // Everything of the history but the last answer token had K/V in the cache.
  EXPECT_GE(hits(stateful), prompt_tokens(a["turn1"]) + completion_tokens(a["turn1"]) - 1);
  EXPECT_EQ(hits(stateless), 0);

  EXPECT_EQ(a["delete"]["status"], 200);
  EXPECT_EQ(a["delete"]["object"], "conversation.deleted");
  EXPECT_EQ(a["delete"]["deleted"], true);
  EXPECT_EQ(a["delete_again"]["status"], 404);
  EXPECT_EQ(a["delete_again"]["code"], "conversation_not_found");
  // A deleted id starts a new conversation.
  EXPECT_EQ(prompt_tokens(a["after"]), prompt_tokens(a["alone"]));
  EXPECT_EQ(a["cleanup"]["status"], 200);
  EXPECT_EQ(wait_metric(stateful, "seer_conversations_cached", 0), 0);
  EXPECT_EQ(wait_metric(stateful, "seer_kv_blocks_used", 0), 0);
}

TEST_F(ConversationE2e, StatelessClientReusesTheHistoryWithPrefixReuse) {
  // Prefix reuse is on by default; --no-prefix-reuse turns it off.
  ServerProcess reuse(tiny_model(), {"--served-model-name", "tiny-random", "--trust-client-conversation-ids", "--policy", "vllm"});
  ServerProcess plain(tiny_model(), {"--served-model-name", "tiny-random", "--trust-client-conversation-ids", "--policy", "vllm", "--no-prefix-reuse"});
  ASSERT_TRUE(reuse.up() && plain.up());
  json a = client("resend", reuse), b = client("resend", plain);
  ASSERT_TRUE(a.contains("turn2") && b.contains("turn2"));
  for (const char* t : {"turn1", "turn2"}) {
    ASSERT_EQ(a[t]["tokens"].size(), 8u) << a.dump();
    EXPECT_EQ(a[t]["tokens"], b[t]["tokens"]) << t;
    EXPECT_EQ(a[t]["content"], b[t]["content"]) << t;
    EXPECT_EQ(usage_counts(a[t]), usage_counts(b[t])) << t;
    EXPECT_EQ(cached_tokens(b[t]), 0) << t;
  }
  EXPECT_EQ(cached_tokens(a["turn2"]), hits(reuse));
  // The re-sent chat starts with turn 1's prompt, whose full blocks were cached.
  EXPECT_GE(hits(reuse), kBlockSize * (prompt_tokens(a["turn1"]) / kBlockSize));
  EXPECT_GT(hits(reuse), 0);
  EXPECT_EQ(hits(plain), 0);
}

TEST_F(ConversationE2e, DisconnectMidTurnKeepsEarlierTurnsAndLeaksNothing) {
  ServerProcess s(tiny_long_context_model(), {"--served-model-name", "tiny-random", "--trust-client-conversation-ids", "--policy", "pensieve", "--no-prefix-reuse"});
  ASSERT_TRUE(s.up());
  json opened = client("open", s, "conv-d");
  ASSERT_EQ(opened.value("chunks", 0), 1) << opened.dump();
  EXPECT_EQ(wait_metric(s, "seer_requests_finished_total{reason=\"abort\"}", 1), 1);
  EXPECT_EQ(wait_metric(s, "seer_requests_running", 0), 0);
  // The aborted turn handed back exactly turn 1's history (prompt + answer, all with
  // K/V now): nothing of turn 2 stays, no block leaks.
  const int history = prompt_tokens(opened["turn1"]) + completion_tokens(opened["turn1"]);
  const int history_blocks = (history + kBlockSize - 1) / kBlockSize;
  EXPECT_EQ(wait_metric(s, "seer_kv_blocks_cached", history_blocks), history_blocks);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
  EXPECT_EQ(metric(s.port(), "seer_conversations_cached").value_or(-1), 1);

  const double hits_before = hits(s);
  json next = client("continue", s, "conv-d");
  ASSERT_TRUE(next.contains("delete")) << next.dump();
  EXPECT_EQ(prompt_tokens(next["turn3"]), history + prompt_tokens(next["alone"]) - 1);
  EXPECT_EQ(hits(s) - hits_before, history);  // turn 1 reused whole, by turn 3
  EXPECT_EQ(next["delete"]["status"], 200);
  EXPECT_EQ(wait_metric(s, "seer_kv_blocks_cached", 0), 0);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used{tier=\"host\"}").value_or(-1), 0);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_cached{tier=\"host\"}").value_or(-1), 0);
  EXPECT_EQ(metric(s.port(), "seer_conversations_cached").value_or(-1), 0);
}

}  // namespace
}  // namespace seer::e2e
