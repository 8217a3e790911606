// The shared KV tier below the host tier (docs/replicas.md): what is stored and
// counted, chunks a cache drops go there, and another cache restores them onto
// its host tier under the KV invariants.
#include <gtest/gtest.h>

#include <numeric>

#include "common/error.h"
#include "kv/conversation_cache.h"
#include "kv/shared_kv_tier.h"

namespace seer {
namespace {

constexpr int32_t kBlock = 16;
constexpr int64_t kBytesPerToken = 10;

std::vector<int32_t> tokens(int32_t n, int32_t first = 0) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  std::iota(t.begin(), t.end(), first);
  return t;
}

TEST(SharedKvTier, CountsOnlyChunksNotStoredBefore) {
  SharedKvTier s(kBytesPerToken, 32);
  auto h = tokens(100);
  s.store("c", h, 64);
  EXPECT_EQ(s.stored_tokens("c"), 64);
  EXPECT_EQ(s.counters().stored_chunks, 2);
  EXPECT_EQ(s.counters().stored_bytes, 64 * kBytesPerToken);
  s.store("c", h, 40);  // already there
  EXPECT_EQ(s.counters().stored_chunks, 2);
  EXPECT_EQ(s.stored_tokens("c"), 64);
  s.store("c", h, 100);  // two more chunks, the last one partial
  EXPECT_EQ(s.counters().stored_chunks, 4);
  EXPECT_EQ(s.counters().stored_bytes, 100 * kBytesPerToken);
  EXPECT_EQ(s.stored_tokens("c", tokens(200)), 100);
  EXPECT_EQ(s.stored_tokens("c", tokens(50)), 50);
  EXPECT_EQ(s.stored_tokens("c", tokens(50, 7)), 0);  // another history
  EXPECT_EQ(s.stored_tokens("unknown"), 0);
}

TEST(SharedKvTier, AHistoryThatDisagreesIsRewrittenFromTheFirstBadChunk) {
  SharedKvTier s(kBytesPerToken, 32);
  s.store("c", tokens(96), 96);
  auto other = tokens(96);
  other[40] = -5;  // chunk 1 differs
  s.store("c", other, 96);
  EXPECT_EQ(s.counters().stored_chunks, 3 + 2);
  EXPECT_EQ(s.stored_tokens("c", other), 96);
  EXPECT_THROW(SharedKvTier(0, 32), Error);
}

TEST(SharedKvTier, FetchesAndMissesAreCounted) {
  SharedKvTier s(kBytesPerToken, 32);
  s.note_fetch(64);
  s.note_fetch(0);
  EXPECT_EQ(s.counters().fetches, 1);
  EXPECT_EQ(s.counters().fetched_tokens, 64);
  EXPECT_EQ(s.counters().fetched_bytes, 64 * kBytesPerToken);
  EXPECT_EQ(s.counters().misses, 1);
}

TEST(SharedKvTier, AnErasedConversationIsForgottenAndOthersStay) {
  SharedKvTier s(kBytesPerToken, 32);
  SharedTier& tier = s;
  s.store("gone", tokens(64), 64);
  s.store("kept", tokens(40), 32);
  tier.erase("gone");
  tier.erase("never stored");
  EXPECT_EQ(s.stored_tokens("gone"), 0);
  EXPECT_TRUE(s.history("gone").empty());
  EXPECT_EQ(s.num_conversations(), 1u);
  EXPECT_EQ(s.stored_bytes_now(), 32 * kBytesPerToken);
  EXPECT_EQ(s.stored_tokens("kept"), 32);
}

struct Replica {
  explicit Replica(SharedKvTier& shared, int32_t device = 16, int32_t host = 8)
      : Replica(shared, KvConfig{kBlock, device, host, 100}) {}
  Replica(SharedKvTier& shared, const KvConfig& layout) : kv(layout), cache(kv, config(shared)) {}
  static ConversationCacheConfig config(SharedKvTier& shared) {
    ConversationCacheConfig c;
    c.chunk_tokens = kBlock;
    c.shared = &shared;
    return c;
  }
  void finish(RequestId id, const std::string& name, int32_t n, double now) {
    ASSERT_TRUE(kv.allocate(id, n));
    auto t = tokens(n);
    cache.release(id, "", name, t, n, 0, now);
    check();
  }
  void check() {
    kv.check_invariants();
    cache.check_invariants();
  }
  KvManager kv;
  ConversationCache cache;
  std::vector<KvOp> ops;
};

TEST(SharedKvTierCache, ChunksDroppedFromTheLastTierAreStored) {
  SharedKvTier shared(kBytesPerToken, kBlock);
  Replica a(shared, /*device=*/8, /*host=*/0);  // no host tier: eviction drops at once
  a.finish(1, "c", 64, 0);
  EXPECT_EQ(a.cache.make_room(8, 1, a.ops), 4);
  a.check();
  EXPECT_EQ(shared.stored_tokens("c"), 64);
  EXPECT_EQ(shared.counters().stored_bytes, 64 * kBytesPerToken);
}

TEST(SharedKvTierCache, AnotherReplicaRestoresTheStoredPrefixOntoItsHostTier) {
  SharedKvTier shared(kBytesPerToken, kBlock);
  Replica a(shared), b(shared);
  shared.store("c", tokens(70), 70);  // a's write-through of a finished turn
  const auto prompt = tokens(90);
  EXPECT_EQ(b.cache.shared_restorable_tokens("c", prompt), 64);  // whole blocks only
  EXPECT_EQ(b.cache.restore_from_shared("c", prompt, 5), 64);
  b.check();
  EXPECT_EQ(b.kv.usage().host.used(), 4);
  EXPECT_EQ(shared.counters().fetches, 1);
  EXPECT_EQ(shared.counters().fetched_bytes, 64 * kBytesPerToken);
  auto m = b.cache.match("", "c", prompt);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tokens, 64);
  EXPECT_EQ(m->dropped_tokens, 0);
  auto attached = b.cache.attach(*m, 7, b.ops, 0);
  ASSERT_TRUE(attached.has_value());
  EXPECT_EQ(b.cache.counters().hit_tokens_host, 64);
  EXPECT_EQ(b.ops.size(), 4u);  // swapped in over the host link
  // Nothing stored: a miss, nothing changes.
  EXPECT_EQ(b.cache.restore_from_shared("other", prompt, 6), 0);
  EXPECT_EQ(shared.counters().misses, 1);
  b.kv.free(7);
  b.check();
}

TEST(SharedKvTierCache, ARestoreWithoutHostRoomIsAMiss) {
  SharedKvTier shared(kBytesPerToken, kBlock);
  shared.store("c", tokens(70), 70);
  const auto prompt = tokens(90);
  // No host tier at all (--shared-kv without --swap-blocks, refused by `seer serve`),
  // and one too small for the stored prefix: nothing restored, and the lookup counts.
  Replica none(shared, /*device=*/16, /*host=*/0), small(shared, /*device=*/16, /*host=*/2);
  EXPECT_EQ(none.cache.shared_restorable_tokens("c", prompt), 64);
  EXPECT_EQ(none.cache.restore_from_shared("c", prompt, 1), 0);
  none.check();
  EXPECT_EQ(shared.counters().misses, 1);
  EXPECT_EQ(small.cache.restore_from_shared("c", prompt, 1), 0);
  small.check();
  EXPECT_EQ(small.kv.usage().host.used(), 0);
  EXPECT_EQ(shared.counters().misses, 2);
  EXPECT_EQ(shared.counters().fetches, 0);
}

// With sliding-window layer groups (kv/kv_layer_groups.h) a restored block comes back
// in every group: 4 blocks of 3 groups need 12 host blocks, and fewer are a miss.
TEST(SharedKvTierCache, ARestoreWithLayerGroupsTakesEveryGroupsHostBlocks) {
  SharedKvTier shared(kBytesPerToken, kBlock);
  shared.store("c", tokens(70), 70);
  const auto prompt = tokens(90);
  Replica small(shared, KvConfig{kBlock, 48, 8, 100, 3, 2, 8}), room(shared, KvConfig{kBlock, 48, 12, 100, 3, 2, 8});
  EXPECT_EQ(small.cache.restore_from_shared("c", prompt, 1), 0);
  small.check();
  EXPECT_EQ(small.kv.usage().host.used(), 0);
  EXPECT_EQ(room.cache.restore_from_shared("c", prompt, 1), 64);
  room.check();
  EXPECT_EQ(room.kv.usage().host.used(), 12);
  auto m = room.cache.match("", "c", prompt);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tokens, 64);
}

TEST(SharedKvTierCache, DroppedLeadingBlocksComeBackFromTheSharedTier) {
  SharedKvTier shared(kBytesPerToken, kBlock);
  Replica a(shared, /*device=*/8, /*host=*/4);
  a.finish(1, "c", 64, 0);
  a.finish(2, "d", 32, 0.9);  // more recent: c's chunks go first
  a.cache.make_room(8, 1, a.ops);  // c to the host, then d pushes c's leading chunks out
  a.check();
  const auto prompt = tokens(80);
  auto m = a.cache.match("", "c", prompt);
  ASSERT_TRUE(m.has_value());
  ASSERT_EQ(m->dropped_tokens, 32);
  EXPECT_GE(shared.stored_tokens("c"), 32);
  EXPECT_EQ(a.cache.shared_restorable_tokens("c", prompt), 32);
  ASSERT_TRUE(a.cache.erase("d"));  // host room for the restore
  EXPECT_EQ(a.cache.restore_from_shared("c", prompt, 3), 32);
  a.check();
  m = a.cache.match("", "c", prompt);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->tokens, 64);
  EXPECT_EQ(m->dropped_tokens, 0);
  EXPECT_EQ(shared.counters().fetched_tokens, 32);
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

TEST(SharedKvTierLimits, OverTheCapTheOldestConversationGoesFirst) {
  SharedKvTier s(kBytesPerToken, 32, {/*max_bytes=*/100 * kBytesPerToken, /*ttl_s=*/0});
  s.store("a", tokens(64), 64, 1.0);
  s.store("b", tokens(32), 32, 2.0);
  EXPECT_EQ(s.stored_bytes_now(), 96 * kBytesPerToken);
  s.store("a", tokens(70), 64, 3.0);  // a is now the most recently active
  SharedStoreDelta d = s.record("c", tokens(32), 32, 4.0);
  ASSERT_EQ(d.evicted.size(), 1u);
  EXPECT_EQ(d.evicted[0].first, "b");
  EXPECT_EQ(s.stored_tokens("b"), 0);
  EXPECT_EQ(s.stored_tokens("a"), 64);
  EXPECT_EQ(s.stored_tokens("c"), 32);
  EXPECT_EQ(s.stored_bytes_now(), 96 * kBytesPerToken);
  EXPECT_EQ(s.counters().evicted_conversations, 1);
  // One conversation alone over the cap keeps nothing (after the others went).
  SharedStoreDelta big = s.record("d", tokens(200), 200, 5.0);
  EXPECT_EQ(big.end_token, 0);
  EXPECT_EQ(s.num_conversations(), 0u);
  EXPECT_EQ(s.stored_bytes_now(), 0);
}

TEST(SharedKvTierLimits, IdleConversationsExpireAfterTheTtl) {
  SharedKvTier s(kBytesPerToken, 32, {0, /*ttl_s=*/10});
  s.store("a", tokens(32), 32, 0.0);
  s.store("b", tokens(32), 32, 5.0);
  s.restored("a", 32, {}, 8.0);  // a fetch is activity
  EXPECT_TRUE(s.expire_idle(15.0).empty());
  std::vector<std::string> gone = s.expire_idle(15.5);
  ASSERT_EQ(gone.size(), 1u);
  EXPECT_EQ(gone[0], "b");
  s.expire(30.0);
  EXPECT_EQ(s.num_conversations(), 0u);
  EXPECT_EQ(s.counters().expired_conversations, 2);
  EXPECT_EQ(s.stored_bytes_now(), 0);
}

TEST(SharedKvTierLimits, AReplicaDoesNotRestoreAnExpiredConversation) {
  SharedKvTier shared(kBytesPerToken, kBlock, {0, /*ttl_s=*/10});
  Replica a(shared), b(shared);
  a.finish(1, "c", 64, 0);
  shared.store("c", tokens(64), 64, 0.0);
  EXPECT_GT(b.cache.shared_restorable_tokens("c", tokens(80)), 0);
  EXPECT_EQ(b.cache.restore_from_shared("c", tokens(80), 20.0), 0);  // idle 20 s > 10 s
  b.check();
  EXPECT_EQ(shared.counters().misses, 1);
  EXPECT_THROW(SharedKvTier(10, 32, {-1, 0}), Error);
  EXPECT_THROW(SharedKvTier(10, 32, {0, -1}), Error);
}

}  // namespace
}  // namespace seer
