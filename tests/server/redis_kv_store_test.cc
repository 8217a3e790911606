// The Redis-backed shared KV tier (kv/redis_kv_store.h) against a real redis-server
// started by the test on a free loopback port: one replica's conversation cache
// writes a finished turn's history and K/V bytes, another restores them onto its
// host tier byte for byte; corrupt and stale chunks end the restored prefix; a
// Redis that is down costs nothing but local-only caching. Skips without
// redis-server (scripts/install-deps.sh installs it).
#include <gtest/gtest.h>

#include <cstring>

#include "common/error.h"
#include "kv/kv_chunk_codec.h"
#include "server/redis_kv_store.h"
#include "server/redis_replica.h"
#include "support/redis_server.h"

namespace seer {
namespace {

using namespace std::chrono_literals;
using kv_testing::kBlock;
using kv_testing::kBlockBytes;
using kv_testing::Replica;
using kv_testing::tokens;

using RedisKvStoreTest = kv_testing::RedisServerTest;

TEST_F(RedisKvStoreTest, AnotherReplicaRestoresHistoryAndKvBytes) {
  Replica a(redis_->url(), 7), b(redis_->url(), 7);
  a.finish(1, "conv", 22, 10);  // 5 whole blocks (20 tokens) of K/V, 22 tokens of history
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_GT(a.store.counters().bytes_written.load(), 5 * kBlockBytes);
  EXPECT_EQ(a.store.counters().errors.load(), 0);

  auto prompt = tokens(30);
  EXPECT_EQ(b.restore("conv", prompt), 20);
  EXPECT_EQ(b.cache.history("conv").size(), 22u);
  for (int32_t i = 0; i < 5; ++i) EXPECT_EQ(b.host_byte("conv", i), 10 + i) << "block " << i;
  EXPECT_EQ(b.store.counters().hits.load(), 1);
  EXPECT_EQ(b.store.counters().hit_tokens.load(), 20);
  // An unknown conversation is a miss.
  EXPECT_EQ(b.restore("nobody", prompt), 0);
  EXPECT_EQ(b.store.counters().misses.load(), 1);
}

TEST_F(RedisKvStoreTest, ACorruptChunkEndsTheRestoredPrefixAndAnotherModelFindsNothing) {
  Replica a(redis_->url(), 7);
  a.finish(1, "conv", 24, 20);  // chunks 0, 1, 2 of 8 tokens
  ASSERT_TRUE(a.store.wait_idle(10s));
  RedisClient c(parse_redis_url(redis_->url(), "test"), 2000ms);
  // Damage one payload byte of chunk 1.
  std::optional<RedisReply> r = c.command({"SETRANGE", a.store.chunk_key("conv", 1), "60", "X"});
  ASSERT_TRUE(r && r->type == RedisReply::Type::Integer) << c.last_error();
  Replica b(redis_->url(), 7);
  EXPECT_EQ(b.restore("conv", tokens(40)), 8);  // chunk 0 only; the rest is recomputed
  EXPECT_EQ(b.store.counters().corrupt.load(), 1);
  EXPECT_EQ(b.host_byte("conv", 1), 21);
  // A chunk written for another model under this model's key is stale.
  KvEntry other{KvEntryKind::Chunk, 8, 0, tokens(8), std::string(2 * kBlockBytes, 'z')};
  r = c.command({"SET", a.store.chunk_key("conv", 0), encode_kv_entry(other)});
  ASSERT_TRUE(r.has_value());
  Replica d(redis_->url(), 7);
  EXPECT_EQ(d.restore("conv", tokens(40)), 0);
  EXPECT_EQ(d.store.counters().stale.load(), 1);
  EXPECT_EQ(d.cache.history("conv").size(), 0u);  // restore_from_shared adopts nothing; the server adopts the history
  // Another model's replica uses other keys: nothing to find.
  Replica e(redis_->url(), 9);
  EXPECT_EQ(e.restore("conv", tokens(40)), 0);
  EXPECT_EQ(e.store.counters().histories.load(), 0);
}

TEST_F(RedisKvStoreTest, TheByteCapDeletesTheOldestConversationsKeys) {
  Replica a(redis_->url(), 7, {.max_bytes = 40 * (kBlockBytes / kBlock)});  // 40 tokens of K/V
  a.finish(1, "old", 24, 1);
  a.finish(2, "new", 24, 2);
  ASSERT_TRUE(a.store.wait_idle(10s));
  RedisClient c(parse_redis_url(redis_->url(), "test"), 2000ms);
  auto exists = [&](const std::string& key) {
    std::optional<RedisReply> r = c.command({"EXISTS", key});
    return r && r->integer == 1;
  };
  EXPECT_FALSE(exists(a.store.chunk_key("old", 0)));
  EXPECT_FALSE(exists(a.store.history_key("old")));
  EXPECT_TRUE(exists(a.store.chunk_key("new", 0)));
  std::optional<RedisReply> ttl = c.command({"TTL", a.store.chunk_key("new", 0)});
  ASSERT_TRUE(ttl.has_value());
  EXPECT_GT(ttl->integer, 0);  // every key expires
}

// SET commands Redis has executed since the last CONFIG RESETSTAT.
int64_t set_calls(RedisClient& c) {
  std::optional<RedisReply> info = c.command({"INFO", "commandstats"});
  EXPECT_TRUE(info && info->type == RedisReply::Type::String) << c.last_error();
  if (!info) return -1;
  const size_t at = info->str.find("cmdstat_set:calls=");
  if (at == std::string::npos) return 0;
  return std::stoll(info->str.substr(at + std::strlen("cmdstat_set:calls=")));
}

TEST_F(RedisKvStoreTest, AReplicaThatTookAConversationOverWritesOnlyNewChunks) {
  Replica a(redis_->url(), 7), b(redis_->url(), 7), c(redis_->url(), 7);
  a.finish(1, "conv", 22, 10);  // chunks 0, 1 (8 tokens each) and 2 (one block): 20 tokens of K/V
  ASSERT_TRUE(a.store.wait_idle(10s));
  ASSERT_EQ(b.restore("conv", tokens(30)), 20);  // a died; b continues the conversation
  RedisClient redis(parse_redis_url(redis_->url(), "test"), 2000ms);
  ASSERT_TRUE(redis.command({"CONFIG", "RESETSTAT"}).has_value()) << redis.last_error();
  // b's next turn ends at 30 tokens (28 in whole blocks). Redis already holds chunks
  // 0 and 1 intact: b writes the history, chunk 2 again (it grew) and chunk 3.
  b.finish(2, "conv", 30, 50);
  ASSERT_TRUE(b.store.wait_idle(10s));
  EXPECT_EQ(set_calls(redis), 3);
  EXPECT_EQ(b.store.counters().errors.load(), 0);
  // What another replica restores: a's blocks where b did not write, b's from chunk 2.
  ASSERT_EQ(c.restore("conv", tokens(40)), 28);
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(c.host_byte("conv", i), 10 + i) << "block " << i;
  for (int32_t i = 4; i < 7; ++i) EXPECT_EQ(c.host_byte("conv", i), 50 + i) << "block " << i;
}

TEST_F(RedisKvStoreTest, EvictedOnlyChunksDroppedFromASmallHostTierAreRestoredExactly) {
  // --shared-kv-evicted-only with a host tier of one chunk: a finished turn writes
  // only its history; chunks reach Redis when the host tier drops them.
  Replica a(redis_->url(), 7, {.host = 2, .write_through = false});
  a.finish(1, "conv", 24, 30);  // 6 blocks: chunks 0, 1, 2
  ASSERT_TRUE(a.store.wait_idle(10s));
  RedisClient redis(parse_redis_url(redis_->url(), "test"), 2000ms);
  auto exists = [&](const std::string& key) {
    std::optional<RedisReply> r = redis.command({"EXISTS", key});
    return r && r->integer == 1;
  };
  EXPECT_TRUE(exists(a.store.history_key("conv")));
  EXPECT_FALSE(exists(a.store.chunk_key("conv", 0)));
  // Device room, one chunk a step: chunk 0 goes to the host; then chunk 1 takes its
  // place there and chunk 0, host only, is dropped (read from the host copy); then
  // chunk 1 is dropped for chunk 2.
  EXPECT_EQ(a.make_room(2, 1), 2);
  EXPECT_EQ(a.cache.counters().dropped_tokens, 0);
  EXPECT_EQ(a.make_room(2, 2), 2);
  EXPECT_EQ(a.make_room(2, 3), 2);
  EXPECT_EQ(a.cache.counters().dropped_tokens, 16);
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_EQ(a.store.counters().errors.load(), 0);
  EXPECT_TRUE(exists(a.store.chunk_key("conv", 0)));
  EXPECT_TRUE(exists(a.store.chunk_key("conv", 1)));
  EXPECT_FALSE(exists(a.store.chunk_key("conv", 2)));  // still on a's host tier
  // Another replica restores the dropped chunks byte for byte.
  Replica b(redis_->url(), 7);
  ASSERT_EQ(b.restore("conv", tokens(40)), 16);
  for (int32_t i = 0; i < 4; ++i) EXPECT_EQ(b.host_byte("conv", i), 30 + i) << "block " << i;
  EXPECT_EQ(b.cache.history("conv").size(), 24u);
}

TEST_F(RedisKvStoreTest, AReadRefreshesTheTtlOfTheHistoryAndEveryChunkFound) {
  Replica a(redis_->url(), 7, {.ttl_s = 600});
  a.finish(1, "conv", 24, 1);  // history and chunks 0, 1, 2
  ASSERT_TRUE(a.store.wait_idle(10s));
  RedisClient redis(parse_redis_url(redis_->url(), "test"), 2000ms);
  std::vector<std::string> keys = {a.store.history_key("conv")};
  for (int32_t k = 0; k < 3; ++k) keys.push_back(a.store.chunk_key("conv", k));
  auto ttl = [&](const std::string& key) {
    std::optional<RedisReply> r = redis.command({"TTL", key});
    return r ? r->integer : -100;
  };
  // The conversation has been idle for a while: 5 s of life left on every key.
  for (const std::string& k : keys) {
    ASSERT_TRUE(redis.command({"EXPIRE", k, "5"}).has_value());
    ASSERT_LE(ttl(k), 5) << k;
  }
  Replica b(redis_->url(), 7, {.ttl_s = 600});
  ASSERT_EQ(b.restore("conv", tokens(40)), 24);
  for (const std::string& k : keys) EXPECT_GT(ttl(k), 500) << k << " was read but not refreshed";
}

TEST(RedisKvStoreDown, ARedisThatIsDownMeansLocalOnlyCaching) {
  // Nothing listens on this port (taken and released): every call fails at once.
  const std::string url = "redis://127.0.0.1:" + std::to_string(seer::testing::free_loopback_port());
  Replica a(url, 7);
  a.finish(1, "conv", 24, 1);
  ASSERT_TRUE(a.store.wait_idle(10s));
  EXPECT_GT(a.store.counters().errors.load(), 0);
  EXPECT_GT(a.store.counters().dropped_writes.load(), 0);
  EXPECT_EQ(a.restore("other", tokens(40)), 0);  // a miss, no error to the caller
  // The local cache still holds the conversation.
  auto m = a.cache.match("", "conv", tokens(40));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tokens, 24);
  EXPECT_THROW(parse_redis_url("redis://host:notaport", "--shared-kv"), Error);
  EXPECT_THROW(parse_redis_url("redis://", "--shared-kv"), Error);
  EXPECT_EQ(parse_redis_url("redis://10.0.0.2:7000", "--shared-kv").port, 7000);
  EXPECT_EQ(parse_redis_url("localhost", "--shared-kv").port, 6379);
}

}  // namespace
}  // namespace seer
