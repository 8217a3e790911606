// The shared KV tier end to end on loopback (docs/deploy.md): deploy/start.sh with
// three `seer serve --shared-kv` replicas behind HAProxy and a redis-server. A
// conversation stays on its replica (cache hits); that replica is killed; the next
// turn succeeds on another replica with the K/V restored from Redis and the same
// greedy answer as a server that recomputes the history. A corrupted entry means a
// recompute with the same answer; Redis stopped mid-run means local-only caching,
// no failed request. Skips without haproxy, redis-server or curl.
#include <signal.h>

#include <gtest/gtest.h>

#include "e2e/deployment.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "server/redis_client.h"
#include "support/redis_server.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

const std::vector<std::string> kTurns = {"Once upon a time", " there was a dog", " and then"};
constexpr int kMaxTokens = 16;

std::string body(const std::string& prompt, const std::string& conversation = "") {
  json b{{"prompt", prompt}, {"max_tokens", kMaxTokens}, {"temperature", 0}};
  if (!conversation.empty()) b["conversation"] = conversation;
  return b.dump();
}

std::string text_of(const std::string& response_body) {
  json j = json::parse(response_body, nullptr, false);
  if (j.is_discarded() || !j.contains("choices")) return "<no completion: " + response_body + ">";
  return j["choices"][0]["text"].get<std::string>();
}

int total_tokens(const std::string& response_body) {
  json j = json::parse(response_body, nullptr, false);
  return j.is_discarded() ? -1 : j["usage"]["total_tokens"].get<int>();
}

// The answers of a server that keeps only histories (vllm: no KV reuse), so every
// turn recomputes the whole history: the reference for greedy output.
std::vector<std::string> recomputed_answers() {
  ServerProcess s(tiny_model(), {"--policy", "vllm", "--trust-client-conversation-ids"});
  std::vector<std::string> out;
  for (const std::string& t : kTurns) {
    HttpResult r = http_post(s.port(), "/v1/completions", body(t, "conv-reference"));
    EXPECT_EQ(r.status, 200) << r.body;
    out.push_back(text_of(r.body));
  }
  return out;
}

std::string series(const std::string& name, const Replica& r, const std::string& labels = "") {
  return name + "{replica=\"" + r.name + "\"" + (labels.empty() ? "" : "," + labels) + "}";  // constant label first
}

// Replicas that refuse --shared-kv (--swap-blocks 0) stop the recipe at start-up,
// and its output says why: the replica's log, naming the flag to give.
TEST(SharedKvRecipe, WithoutAHostTierTheRecipeStopsAndShowsTheReplicasError) {
  if (haproxy_binary().empty()) GTEST_SKIP() << "haproxy is not installed (scripts/install-deps.sh installs it)";
  if (seer::testing::redis_server_binary().empty())
    GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs it)";
  ASSERT_FALSE(tiny_model().empty());
  const int redis_port = seer::testing::free_loopback_port();
  Deployment d(2, tiny_model(), {"--policy", "pensieve", "--swap-blocks", "0"}, redis_port, /*expect_up=*/false);
  EXPECT_FALSE(d.up());
  EXPECT_EQ(d.exit_code(), 1);
  const std::string log = d.start_log();
  EXPECT_NE(log.find("did not start"), std::string::npos) << log;
  EXPECT_NE(log.find("--swap-blocks"), std::string::npos) << log;
  EXPECT_EQ(log.find("Connection refused"), std::string::npos) << log;  // Redis's readiness poll is quiet
  EXPECT_FALSE(seer::testing::redis_answers(redis_port)) << "the recipe left its redis-server running";
}

class SharedKvE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (haproxy_binary().empty()) GTEST_SKIP() << "haproxy is not installed (scripts/install-deps.sh installs it)";
    if (seer::testing::redis_server_binary().empty())
      GTEST_SKIP() << "redis-server is not installed (scripts/install-deps.sh installs it)";
    int status = 0;
    run_command("curl --version > /dev/null 2>&1", &status);
    if (status != 0) GTEST_SKIP() << "curl is not installed (deploy/start.sh needs it)";
    ASSERT_FALSE(tiny_model().empty());
    want_ = recomputed_answers();
    redis_port_ = seer::testing::free_loopback_port();
    d_ = std::make_unique<Deployment>(3, tiny_model(),
                                      std::vector<std::string>{"--policy", "pensieve", "--swap-blocks", "64", "--trust-client-conversation-ids"},
                                      redis_port_);
    ASSERT_TRUE(d_->up());
    ASSERT_GT(d_->redis().pid, 0);
    redis_ = std::make_unique<RedisClient>(RedisEndpoint{"127.0.0.1", redis_port_}, 5000ms);
  }

  // Two turns through the balancer; returns the replica that served them, after
  // their histories and K/V are in Redis.
  const Replica& two_turns(const std::string& conv) {
    LbResponse t1 = lb_post(d_->lb_port(), body(kTurns[0]), conv);
    EXPECT_EQ(t1.status, 200) << t1.body;
    LbResponse t2 = lb_post(d_->lb_port(), body(kTurns[1]), conv);
    EXPECT_EQ(t2.status, 200) << t2.body;
    EXPECT_EQ(t2.replica, t1.replica) << "the second turn left the conversation's replica";
    EXPECT_EQ(text_of(t1.body), want_[0]);
    EXPECT_EQ(text_of(t2.body), want_[1]);
    const Replica& home = d_->replica(t1.replica);
    EXPECT_GT(cache_hits(home), 0) << "the second turn did not reuse the first turn's KV";
    // The write-through runs off the engine loop: wait until Redis holds the whole
    // history (header + 4 bytes per token).
    const size_t history_bytes = 40 + 4 * static_cast<size_t>(total_tokens(t2.body));
    EXPECT_TRUE(wait_until([&] { return history_value_size(conv) == history_bytes; }))
        << history_value_size(conv) << " bytes of history in Redis, want " << history_bytes;
    return home;
  }

  std::vector<std::string> keys(const std::string& pattern) {
    std::vector<std::string> out;
    std::optional<RedisReply> r = redis_->command({"KEYS", pattern});
    if (r) for (const RedisReply& k : r->elements) out.push_back(k.str);
    return out;
  }
  size_t history_value_size(const std::string& conv) {
    std::vector<std::string> k = keys("seer:kv:*:anonymous/" + conv + ":h");
    if (k.size() != 1) return 0;
    std::optional<RedisReply> r = redis_->command({"STRLEN", k[0]});
    return r ? static_cast<size_t>(r->integer) : 0;
  }

  // Kills `home` and waits until the balancer routes around it.
  void kill_replica(const Replica& home) {
    ASSERT_EQ(kill(home.pid, SIGKILL), 0);
    ASSERT_TRUE(wait_until([&] { return gone(home); }));
    ASSERT_TRUE(wait_until([&] { return lb_status(*d_, home).rfind("DOWN", 0) == 0; })) << lb_status(*d_, home);
  }

  std::vector<std::string> want_;
  int redis_port_ = 0;
  std::unique_ptr<Deployment> d_;
  std::unique_ptr<RedisClient> redis_;
};

TEST_F(SharedKvE2e, FailoverTurnRestoresKvFromRedisWithTheSameAnswer) {
  const Replica& home = two_turns("conv-failover");
  EXPECT_FALSE(keys("seer:kv:*:anonymous/conv-failover:c:0").empty()) << "no K/V chunk in Redis";
  kill_replica(home);
  LbResponse t3 = lb_post(d_->lb_port(), body(kTurns[2]), "conv-failover");
  ASSERT_EQ(t3.status, 200) << t3.body;
  ASSERT_NE(t3.replica, home.name);
  EXPECT_EQ(text_of(t3.body), want_[2]) << "restored K/V changed the greedy answer";
  const Replica& next = d_->replica(t3.replica);
  EXPECT_GT(metric(next.port, series("seer_shared_kv_hit_tokens_total", next)).value_or(0), 0)
      << "the new replica recomputed instead of restoring from Redis";
  EXPECT_EQ(metric(next.port, series("seer_shared_kv_hits_total", next)).value_or(0), 1);
  EXPECT_GT(metric(next.port, series("seer_cache_hit_tokens_total", next, "tier=\"host\"")).value_or(0), 0);
  EXPECT_GT(metric(next.port, series("seer_shared_kv_bytes_total", next, "direction=\"read\"")).value_or(0), 0);
  EXPECT_GT(metric(next.port, series("seer_shared_kv_latency_seconds_count", next)).value_or(0), 0);
}

TEST_F(SharedKvE2e, CorruptEntryMeansRecomputeWithTheSameAnswer) {
  const Replica& home = two_turns("conv-corrupt");
  std::vector<std::string> chunks = keys("seer:kv:*:anonymous/conv-corrupt:c:*");
  ASSERT_FALSE(chunks.empty());
  for (const std::string& k : chunks) {
    std::optional<RedisReply> r = redis_->command({"SETRANGE", k, "100", "garbage"});
    ASSERT_TRUE(r && r->type == RedisReply::Type::Integer) << redis_->last_error();
  }
  kill_replica(home);
  LbResponse t3 = lb_post(d_->lb_port(), body(kTurns[2]), "conv-corrupt");
  ASSERT_EQ(t3.status, 200) << t3.body;
  EXPECT_EQ(text_of(t3.body), want_[2]);
  const Replica& next = d_->replica(t3.replica);
  EXPECT_GE(metric(next.port, series("seer_shared_kv_corrupt_total", next, "kind=\"corrupt\"")).value_or(0), 1);
  EXPECT_EQ(metric(next.port, series("seer_shared_kv_hit_tokens_total", next)).value_or(-1), 0);
  EXPECT_NE(d_->log(next.name).find("corrupt chunk"), std::string::npos) << d_->log(next.name);
}

TEST_F(SharedKvE2e, RedisStoppedMidRunRequestsStillSucceed) {
  LbResponse t1 = lb_post(d_->lb_port(), body(kTurns[0]), "conv-down");
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_EQ(kill(d_->redis().pid, SIGKILL), 0);
  ASSERT_TRUE(wait_until([&] { return !seer::testing::redis_answers(redis_port_); }));
  // The conversation continues on its replica from the local cache...
  LbResponse t2 = lb_post(d_->lb_port(), body(kTurns[1]), "conv-down");
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(t2.replica, t1.replica);
  EXPECT_EQ(text_of(t2.body), want_[1]);
  // ...and new conversations and plain requests are served everywhere.
  for (int i = 0; i < 6; ++i) {
    LbResponse r = lb_post(d_->lb_port(), body("Hi"), i % 2 ? "" : "conv-new-" + std::to_string(i));
    EXPECT_EQ(r.status, 200) << r.body;
  }
  // The failed writes are counted off the engine loop and published after its next
  // step: small requests to the replica itself until they show.
  const Replica& home = d_->replica(t1.replica);
  EXPECT_TRUE(wait_until([&] {
    EXPECT_EQ(http_post(home.port, "/v1/completions", body("Hi")).status, 200);
    return metric(home.port, series("seer_shared_kv_errors_total", home)).value_or(0) > 0;
  }));
  const std::string log = d_->log(home.name);
  size_t warnings = 0;
  for (size_t at = log.find("unavailable"); at != std::string::npos; at = log.find("unavailable", at + 1)) ++warnings;
  EXPECT_EQ(warnings, 1u) << "one warning per outage:\n" << log;
}

}  // namespace
}  // namespace seer::e2e
