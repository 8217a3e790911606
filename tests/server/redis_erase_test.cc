// RedisKvStore::erase against a real redis-server: a conversation erased on one
// replica is gone for every replica (its history, the chunks this replica wrote and
// chunk keys it never knew of), other conversations' keys are untouched (also one
// whose name extends the erased one's, or that a glob pattern of it would match),
// and neither a write nor a read queued before the erase brings it back. Skips
// without redis-server.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>

#include "server/redis_client.h"
#include "server/redis_replica.h"
#include "support/redis_server.h"

namespace seer {
namespace {

using namespace std::chrono_literals;
using kv_testing::Replica;
using kv_testing::tokens;

class RedisEraseTest : public kv_testing::RedisServerTest {
 protected:
  void SetUp() override {
    RedisServerTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    admin_ = std::make_unique<RedisClient>(parse_redis_url(redis_->url(), "test"), 2000ms);
  }
  bool exists(const std::string& key) {
    std::optional<RedisReply> r = admin_->command({"EXISTS", key});
    EXPECT_TRUE(r && r->type == RedisReply::Type::Integer) << admin_->last_error();
    return r && r->integer == 1;
  }
  // Holds every client's commands for `ms` (the store's I/O thread then waits on
  // its current command, and what it has queued stays queued).
  void pause_redis(int ms) {
    std::optional<RedisReply> r = admin_->command({"CLIENT", "PAUSE", std::to_string(ms)});
    ASSERT_TRUE(r && r->type == RedisReply::Type::Status) << admin_->last_error();
  }
  int64_t set_calls() {
    std::optional<RedisReply> info = admin_->command({"INFO", "commandstats"});
    EXPECT_TRUE(info && info->type == RedisReply::Type::String) << admin_->last_error();
    if (!info) return -1;
    const size_t at = info->str.find("cmdstat_set:calls=");
    return at == std::string::npos ? 0 : std::stoll(info->str.substr(at + std::strlen("cmdstat_set:calls=")));
  }
  std::unique_ptr<RedisClient> admin_;
};

TEST_F(RedisEraseTest, AnErasedConversationIsGoneForEveryReplicaAndOthersAreUntouched) {
  Replica a(redis_->url(), 7, {.device = 64, .host = 64});
  a.finish(1, "conv", 24, 1);      // history and chunks 0, 1, 2
  a.finish(2, "other", 24, 2);
  a.finish(3, "conv:c:5", 16, 3);  // its keys start with conv's chunk-key prefix
  a.finish(4, "a[bc]", 16, 4);     // a MATCH of it unescaped would take "ab"
  a.finish(5, "ab", 16, 5);
  ASSERT_TRUE(a.store.wait_idle(10s));
  // Chunks another replica wrote (e.g. with a larger history): a does not know them.
  for (const char* name : {"conv", "a[bc]", "ab"})
    for (int32_t k : {7, 1234}) ASSERT_TRUE(admin_->command({"SET", a.store.chunk_key(name, k), "x"}).has_value());
  ASSERT_TRUE(exists(a.store.history_key("conv")));

  a.store.erase("conv");
  a.store.erase("a[bc]");
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_EQ(a.store.counters().erased.load(), 2);
  EXPECT_EQ(a.store.counters().errors.load(), 0);
  EXPECT_FALSE(exists(a.store.history_key("conv")));
  for (int32_t k : {0, 1, 2, 7, 1234}) EXPECT_FALSE(exists(a.store.chunk_key("conv", k))) << "chunk " << k;
  EXPECT_FALSE(exists(a.store.history_key("a[bc]")));
  for (int32_t k : {0, 1, 7, 1234}) EXPECT_FALSE(exists(a.store.chunk_key("a[bc]", k))) << "chunk " << k;
  for (const char* name : {"other", "conv:c:5", "ab"}) {
    EXPECT_TRUE(exists(a.store.history_key(name))) << name;
    EXPECT_TRUE(exists(a.store.chunk_key(name, 0))) << name;
  }
  EXPECT_TRUE(exists(a.store.chunk_key("ab", 1234)));
  EXPECT_TRUE(exists(a.store.chunk_key("other", 2)));

  Replica b(redis_->url(), 7);
  EXPECT_EQ(b.restore("conv", tokens(40)), 0);
  EXPECT_EQ(b.store.counters().histories.load(), 0);  // no history either
  EXPECT_EQ(b.restore("other", tokens(40)), 24);
}

TEST_F(RedisEraseTest, AWriteQueuedBeforeTheEraseDoesNotBringTheConversationBack) {
  Replica a(redis_->url(), 7);
  ASSERT_TRUE(a.store.wait_idle(10s));  // connected
  ASSERT_TRUE(admin_->command({"CONFIG", "RESETSTAT"}).has_value());
  pause_redis(1000);
  a.finish(1, "conv", 24, 1);  // queues 4 SETs: the history and chunks 0, 1, 2
  a.store.erase("conv");       // at most the SET in flight still runs
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_LE(set_calls(), 1);
  EXPECT_FALSE(exists(a.store.history_key("conv")));
  for (int32_t k = 0; k < 3; ++k) EXPECT_FALSE(exists(a.store.chunk_key("conv", k))) << "chunk " << k;
  Replica b(redis_->url(), 7);
  EXPECT_EQ(b.restore("conv", tokens(40)), 0);
  EXPECT_EQ(b.store.counters().histories.load(), 0);
}

TEST_F(RedisEraseTest, AReadIssuedBeforeTheEraseFindsNothing) {
  Replica a(redis_->url(), 7), b(redis_->url(), 7);
  a.finish(1, "conv", 24, 1);
  ASSERT_TRUE(a.store.wait_idle(10s));
  ASSERT_TRUE(b.store.wait_idle(10s));
  // Done but not yet staged when the erase comes.
  std::shared_ptr<const SharedFetch> done = b.store.fetch("conv");
  ASSERT_TRUE(b.store.wait_idle(10s));
  ASSERT_EQ(done->history.size(), 24u);
  // Still waiting on Redis when the erase comes.
  pause_redis(500);
  std::shared_ptr<const SharedFetch> waiting = b.store.fetch("conv");
  b.store.erase("conv");
  EXPECT_TRUE(done->history.empty());
  EXPECT_EQ(done->kv_tokens, 0);
  ASSERT_TRUE(b.store.wait_idle(10s));
  ASSERT_TRUE(waiting->done.load());
  EXPECT_TRUE(waiting->history.empty());
  EXPECT_EQ(waiting->kv_tokens, 0);
  b.store.stage(done);
  EXPECT_EQ(b.cache.restore_from_shared("conv", tokens(40), 1), 0);
  b.store.unstage("conv");
}

}  // namespace
}  // namespace seer
