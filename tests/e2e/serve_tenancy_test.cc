// Tenancy of `seer serve` with API keys: each key (or each tenant of --api-key-file)
// sees its own conversations. The same conversation id under another tenant is
// another conversation: it neither reads nor extends the first one's history, and
// its DELETE cannot reach it. The prefix cache (--prefix-reuse) is partitioned the
// same way: a prompt one tenant cached never gives another tenant a cache hit, so a
// hit cannot tell B what A asked.
#include <fstream>
#include <optional>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "server/redis_client.h"
#include "support/redis_server.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

constexpr int kBlockSize = 16;  // seer serve's default --block-size
constexpr int kBos = 1;         // a continued turn's message is added without its BOS
const std::string kKeyA = "sk-tenant-a-5f0c2e9d41";
const std::string kKeyB = "sk-tenant-b-83a7d6b210";

// One greedy chat turn of exactly 8 tokens, sent with `key` ("" conversation: none).
HttpResult turn(const ServerProcess& s, const std::string& key, const std::string& message,
                const std::string& conversation) {
  return http_request(s.port(), "POST", "/v1/chat/completions", chat_body(message, 8, conversation), bearer(key));
}

HttpResult delete_conversation(const ServerProcess& s, const std::string& key, const std::string& conversation) {
  return http_request(s.port(), "DELETE", "/v1/conversations/" + conversation, "", bearer(key));
}

TEST(ServeTenancy, SameIdUnderAnotherKeyNeitherSeesNorChangesTheConversation) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB});
  ASSERT_TRUE(s.up());
  // A opens "shared-id"; B then sends the same first message under the same id.
  HttpResult a1 = turn(s, kKeyA, "Once upon a time", "shared-id");
  ASSERT_EQ(a1.status, 200) << a1.body;
  HttpResult b1 = turn(s, kKeyB, "Once upon a time", "shared-id");
  ASSERT_EQ(b1.status, 200) << b1.body;
  // B's turn is a fresh conversation: A's history is not in its prompt.
  EXPECT_EQ(prompt_tokens(b1), prompt_tokens(a1)) << "B's turn read A's history";
  EXPECT_EQ(text_of(b1), text_of(a1));

  // A's next turn carries A's first turn and nothing of B's: exactly like a control
  // conversation of A's that nobody else touched.
  HttpResult c1 = turn(s, kKeyA, "Once upon a time", "control-id");
  ASSERT_EQ(c1.status, 200) << c1.body;
  HttpResult a2 = turn(s, kKeyA, "What happened next?", "shared-id");
  HttpResult c2 = turn(s, kKeyA, "What happened next?", "control-id");
  ASSERT_EQ(a2.status, 200) << a2.body;
  ASSERT_EQ(c2.status, 200) << c2.body;
  EXPECT_GT(prompt_tokens(a2), prompt_tokens(a1)) << "A's own history is gone";
  EXPECT_EQ(prompt_tokens(a2), prompt_tokens(c2)) << "B's turn was added to A's conversation";
  EXPECT_EQ(text_of(a2), text_of(c2)) << "B's turn changed A's greedy answer";

  // B's DELETE of the id deletes B's conversation only.
  HttpResult b_del = delete_conversation(s, kKeyB, "shared-id");
  EXPECT_EQ(b_del.status, 200) << b_del.body;
  HttpResult b_again = delete_conversation(s, kKeyB, "shared-id");
  EXPECT_EQ(b_again.status, 404) << b_again.body;
  HttpResult a3 = turn(s, kKeyA, "And then?", "shared-id");
  HttpResult c3 = turn(s, kKeyA, "And then?", "control-id");
  ASSERT_EQ(a3.status, 200) << a3.body;
  ASSERT_EQ(c3.status, 200) << c3.body;
  EXPECT_EQ(prompt_tokens(a3), prompt_tokens(c3)) << "B's DELETE removed A's history";
  EXPECT_EQ(text_of(a3), text_of(c3));

  // A's own DELETE works, once.
  HttpResult a_del = delete_conversation(s, kKeyA, "shared-id");
  EXPECT_EQ(a_del.status, 200) << a_del.body;
  EXPECT_EQ(json_of(a_del).value("deleted", false), true) << a_del.body;
  HttpResult a_again = delete_conversation(s, kKeyA, "shared-id");
  EXPECT_EQ(a_again.status, 404) << a_again.body;
  EXPECT_EQ(error_code(a_again), "conversation_not_found");
}

TEST(ServeTenancy, DeletingAnotherTenantsConversationIs404AndLeavesItWhole) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB});
  ASSERT_TRUE(s.up());
  HttpResult a1 = turn(s, kKeyA, "Once upon a time", "a-only");
  ASSERT_EQ(a1.status, 200) << a1.body;
  HttpResult b_del = delete_conversation(s, kKeyB, "a-only");
  EXPECT_EQ(b_del.status, 404) << b_del.body;
  EXPECT_EQ(error_code(b_del), "conversation_not_found");
  // A's conversation still carries its history: turn 1 plus the new message.
  HttpResult alone = turn(s, kKeyA, "What happened next?", "");
  HttpResult a2 = turn(s, kKeyA, "What happened next?", "a-only");
  ASSERT_EQ(alone.status, 200) << alone.body;
  ASSERT_EQ(a2.status, 200) << a2.body;
  EXPECT_EQ(prompt_tokens(a2), prompt_tokens(a1) + completion_tokens(a1) + prompt_tokens(alone) - kBos);
  EXPECT_EQ(delete_conversation(s, kKeyA, "a-only").status, 200);
}

TEST(ServeTenancy, KeysOfOneTenantInTheKeyFileShareItsConversations) {
  ASSERT_FALSE(tiny_model().empty());
  const std::string file = seer::testing::scratch_dir() + "/tenant-keys.txt";
  {
    std::ofstream out(file);
    out << "# team A has two keys\n"
        << "sk-team-a-one team-a\n"
        << "sk-team-a-two\tteam-a\n"
        << "\n"
        << "sk-team-b team-b\n"
        << "sk-solo\n";  // no tenant name: a tenant of its own
  }
  ServerProcess s(tiny_model(), {"--api-key-file", file});
  ASSERT_TRUE(s.up());
  HttpResult t1 = turn(s, "sk-team-a-one", "Once upon a time", "team-conv");
  ASSERT_EQ(t1.status, 200) << t1.body;
  HttpResult alone = turn(s, "sk-team-a-one", "What happened next?", "");
  ASSERT_EQ(alone.status, 200) << alone.body;
  const int fresh = prompt_tokens(alone);
  // The other key of team A continues the conversation...
  HttpResult t2 = turn(s, "sk-team-a-two", "What happened next?", "team-conv");
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(prompt_tokens(t2), prompt_tokens(t1) + completion_tokens(t1) + fresh - kBos);
  // ...while team B and the solo key start their own under the same id.
  for (const char* key : {"sk-team-b", "sk-solo"}) {
    HttpResult other = turn(s, key, "What happened next?", "team-conv");
    ASSERT_EQ(other.status, 200) << key << ": " << other.body;
    EXPECT_EQ(prompt_tokens(other), fresh) << key << " read team A's history";
  }
}

// The prompt carries a secret over many KV blocks (one token per byte in the tiny
// model's vocabulary).
std::string secret_prompt() {
  return "Tenant A's vault code is 4711-0815-2342; never tell anyone. The quick brown fox jumps over the lazy dog "
         "while the vault stays shut, and the code stays in this prompt only.";
}

TEST(ServeTenancy, PrefixCacheGivesNoHitToAnotherTenantsIdenticalPrompt) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--policy", "vllm", "--prefix-reuse", "--api-key", kKeyA, "--api-key", kKeyB});
  ASSERT_TRUE(s.up());
  auto send = [&](const std::string& key) {
    return http_request(s.port(), "POST", "/v1/completions", completion_body(secret_prompt(), 2), bearer(key));
  };
  // Requests are sequential: /metrics read between them is exact (e2e/wait.h).
  auto hits = [&] { return cache_hit_tokens(s.port(), bearer(kKeyA)); };

  HttpResult a1 = send(kKeyA);
  ASSERT_EQ(a1.status, 200) << a1.body;
  const int prompt = prompt_tokens(a1);
  ASSERT_GE(prompt, 8 * kBlockSize) << "the prompt should span several KV blocks";
  const std::optional<double> after_a1 = hits();
  ASSERT_TRUE(after_a1.has_value()) << "no seer_cache_hit_tokens_total in /metrics";
  EXPECT_EQ(*after_a1, 0);

  HttpResult b1 = send(kKeyB);
  ASSERT_EQ(b1.status, 200) << b1.body;
  const double after_b1 = hits().value_or(-1);
  EXPECT_EQ(after_b1, *after_a1) << "tenant B's request reused tenant A's cached prompt";

  // Each tenant's own repeat does hit: its whole blocks (one token is left to compute).
  const double whole_blocks = kBlockSize * ((prompt - 1) / kBlockSize);
  HttpResult a2 = send(kKeyA);
  ASSERT_EQ(a2.status, 200) << a2.body;
  const double after_a2 = hits().value_or(-1);
  EXPECT_GE(after_a2 - after_b1, whole_blocks) << "tenant A's repeat missed its own cache";
  HttpResult b2 = send(kKeyB);
  ASSERT_EQ(b2.status, 200) << b2.body;
  EXPECT_GE(hits().value_or(-1) - after_a2, whole_blocks) << "tenant B's repeat missed its own cache";
  EXPECT_EQ(text_of(a2), text_of(a1));
  EXPECT_EQ(text_of(b2), text_of(a1));
}

// Through the shared Redis tier, too: A's conversation, written to Redis by one
// replica, is restored on another replica for A, and never for B under the same id.
TEST(ServeTenancy, TheSharedTierRestoresAConversationOnlyForItsTenant) {
  if (seer::testing::redis_server_binary().empty())
    GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs it)";
  ASSERT_FALSE(tiny_model().empty());
  seer::testing::RedisServer redis;
  ASSERT_TRUE(redis.up());
  const std::vector<std::string> flags = {"--policy", "pensieve", "--swap-blocks", "64", "--shared-kv", redis.url(),
                                          "--api-key", kKeyA, "--api-key", kKeyB};
  ServerProcess home(tiny_model(), flags), other(tiny_model(), flags);
  ASSERT_TRUE(home.up() && other.up());

  HttpResult a1 = turn(home, kKeyA, "Once upon a time", "shared-id");
  ASSERT_EQ(a1.status, 200) << a1.body;
  RedisClient client(RedisEndpoint{"127.0.0.1", redis.port()}, std::chrono::milliseconds(5000));
  auto histories = [&] {  // the write-through runs off the engine loop
    std::optional<RedisReply> r = client.command({"KEYS", "*:h"});
    return r && r->type == RedisReply::Type::Array ? r->elements.size() : size_t{0};
  };
  ASSERT_TRUE(wait_until([&] { return histories() == 1; })) << histories() << " histories in Redis";

  HttpResult alone = turn(other, kKeyB, "What happened next?", "");
  ASSERT_EQ(alone.status, 200) << alone.body;
  HttpResult b = turn(other, kKeyB, "What happened next?", "shared-id");
  ASSERT_EQ(b.status, 200) << b.body;
  EXPECT_EQ(prompt_tokens(b), prompt_tokens(alone)) << "B restored A's conversation from Redis";
  HttpResult a2 = turn(other, kKeyA, "What happened next?", "shared-id");
  ASSERT_EQ(a2.status, 200) << a2.body;
  EXPECT_EQ(prompt_tokens(a2), prompt_tokens(a1) + completion_tokens(a1) + prompt_tokens(alone) - kBos)
      << "A's conversation did not come back from Redis on the other replica";
}

}  // namespace
}  // namespace seer::e2e
