// ConversationCache: adoption of a finished request's KV, eviction of leading
// chunks over two tiers, ahead-of-time swap-out with lazy reclaim, drops, and
// re-admission of a history with holes; all under the KV invariants.
#include <gtest/gtest.h>

#include <numeric>

#include "kv/conversation_cache_fixture.h"

namespace seer {
namespace {

using testing_kv::Fixture;
using testing_kv::kBlock;

TEST(ConversationCache, AdoptsAFinishedRequestsKv) {
  Fixture f;
  f.finish(1, "c", 50, 0);
  EXPECT_EQ(f.kv.usage().request_tables, 0u);
  EXPECT_EQ(f.kv.usage().cache_tables, 1u);
  EXPECT_EQ(f.kv.usage().device.used(), 4);
  EXPECT_EQ(f.cache.num_conversations(), 1u);
  EXPECT_EQ(f.cache.history("c").size(), 50u);
  EXPECT_TRUE(f.cache.erase("c"));
  EXPECT_FALSE(f.cache.erase("c"));
  EXPECT_EQ(f.kv.usage().device.used(), 0);
  f.check();
}

TEST(ConversationCache, EvictsFromTheLeadingEndOverBothTiers) {
  Fixture f(16, 1);  // the host tier holds one block
  f.finish(1, "c", 64, 0);
  EXPECT_EQ(f.cache.make_room(1, 10, f.ops), 1);
  ASSERT_EQ(f.ops.size(), 1u);
  EXPECT_EQ(f.ops[0].kind, KvOpKind::SwapOut);
  f.check();
  // Block 0 now lives on the host; the next eviction drops it to make host room.
  EXPECT_EQ(f.cache.make_room(1, 10, f.ops), 1);
  f.check();
  auto m = f.cache.match("", "c", f.prompt(70));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 64);
  EXPECT_EQ(m->dropped_tokens, 16);
  EXPECT_EQ(f.cache.counters().dropped_tokens, 16);
}

TEST(ConversationCache, ReadmitsAHistoryWithHolesOnTheDevice) {
  Fixture f(16, 1);
  f.finish(1, "c", 64, 0);
  f.cache.make_room(2, 10, f.ops);  // block 0 dropped, block 1 on the host, 2 and 3 on the device
  f.ops.clear();
  auto m = f.cache.match("", "c", f.prompt(70));
  ASSERT_TRUE(m);
  EXPECT_EQ(f.cache.attach_blocks_needed(*m), 2);
  auto r = f.cache.attach(*m, 7, f.ops, 0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->computed_tokens, 64);
  EXPECT_EQ(r->dropped_tokens, 16);
  ASSERT_EQ(f.ops.size(), 1u);
  EXPECT_EQ(f.ops[0].kind, KvOpKind::SwapIn);
  EXPECT_TRUE(f.kv.table(7).resident(f.kv.config().blocks_for(64)));
  EXPECT_EQ(f.cache.num_conversations(), 0u);  // the KV left with the request
  // The scheduler counts the admission: a 70-token prompt whose 64-token history
  // came back with its leading 16 tokens dropped.
  f.cache.note_lookup(70, 64, r->computed_tokens - r->dropped_tokens);
  const CacheCounters& c = f.cache.counters();
  EXPECT_EQ(c.hit_tokens_device, 32);
  EXPECT_EQ(c.hit_tokens_host, 16);
  EXPECT_EQ(c.lookup_tokens, 70);
  EXPECT_EQ(c.history_tokens, 64);
  EXPECT_EQ(c.recomputed_tokens, 16);  // history minus reused
  EXPECT_NEAR(c.hit_rate(), 48.0 / 70.0, 1e-12);
  f.check();
  f.kv.free(7);
  f.check();
}

TEST(ConversationCache, SwapsOutAheadOfTimeAndReclaimsLazily) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.swap_out_threshold = 0.5;
  Fixture f(8, 8, c);
  f.finish(1, "c", 96, 0);  // 6 of 8 device blocks used: 25 % free
  f.cache.maintain(1, f.ops);
  EXPECT_EQ(f.ops.size(), 2u);  // two chunks copied: free + clean = 50 %
  EXPECT_EQ(f.cache.clean_device_blocks(), 2);
  EXPECT_EQ(f.kv.usage().device.used(), 6);  // still on the device
  f.check();
  f.ops.clear();
  EXPECT_EQ(f.cache.make_room(2, 2, f.ops), 2);
  EXPECT_TRUE(f.ops.empty());  // reclaimed without a copy
  EXPECT_EQ(f.kv.usage().device.used(), 4);
  f.check();
}

TEST(ConversationCache, SwapOutAheadOfTimeKeepsDearerHostChunks) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.swap_out_threshold = 0.5;
  Fixture f(8, 2, c);
  f.finish(1, "b", 96, 0);   // 6 device blocks, idle since t = 0
  f.finish(2, "a", 32, 50);  // 2 device blocks, active at t = 50
  auto b = f.cache.match("", "b", f.prompt(100));
  ASSERT_TRUE(b);
  EXPECT_EQ(f.cache.make_room(2, 50, f.ops, b->owner), 2);  // "a" goes to the host, which is then full
  f.check();
  f.ops.clear();
  // Free device KV is below the threshold, but b's leading chunk is worth less
  // (idle longer) than a's on the host: nothing moves, nothing is dropped.
  f.cache.maintain(60, f.ops);
  EXPECT_TRUE(f.ops.empty());
  EXPECT_EQ(f.cache.counters().dropped_tokens, 0);
  auto a = f.cache.match("", "a", f.prompt(40));
  ASSERT_TRUE(a);
  EXPECT_EQ(a->dropped_tokens, 0);
  f.check();
}

TEST(ConversationCache, DeviceOnlyCacheDrops) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.host_tier = false;
  Fixture f(16, 8, c);
  f.finish(1, "c", 64, 0);
  EXPECT_EQ(f.cache.make_room(3, 1, f.ops), 3);
  EXPECT_TRUE(f.ops.empty());
  EXPECT_EQ(f.cache.counters().dropped_tokens, 48);
  f.check();
}

TEST(ConversationCache, PensieveWeighsPositionAndIdlenessLruOnlyIdleness) {
  for (EvictionPolicy p : {EvictionPolicy::Pensieve, EvictionPolicy::Lru}) {
    ConversationCacheConfig c = Fixture::chunk_of_one_block();
    c.host_tier = false;
    c.eviction = p;
    c.chunk_cost = [](int32_t l) { return l + 1.0; };
    Fixture f(16, 0, c);
    f.finish(1, "old", 64, 0, /*dropped=*/32);  // leading device chunk at position 32
    f.finish(2, "new", 64, 50);                  // leading device chunk at position 0
    f.cache.make_room(1, 100, f.ops);
    // Pensieve: old 33/100 > new 1/50, so the newer conversation's cheap chunk goes.
    const std::string victim = p == EvictionPolicy::Lru ? "old" : "new";
    EXPECT_EQ(f.cache.match("", victim, f.prompt(70))->dropped_tokens, victim == "old" ? 48 : 16)
        << eviction_policy_name(p);
  }
}

TEST(ConversationCache, PrefixReuseMatchesByBlockHashesAndVerifiesTokens) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  Fixture f(16, 0, c);
  f.finish(1, "", 50, 0);
  auto p = f.prompt(80);
  auto m = f.cache.match("", "", p);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 50);
  p[40] = 999;  // diverges inside block 2
  m = f.cache.match("", "", p);
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 40);
  p[3] = 999;  // the first block differs: no hash hit
  EXPECT_FALSE(f.cache.match("", "", p));
}

// Any number of running requests reference an anonymous entry's blocks; the entry
// stays, its blocks are pinned while they are shared, and a sharer that ends with
// the entry's whole KV in its table replaces it.
TEST(ConversationCache, AnonymousEntriesAreSharedByAnyNumberOfRequests) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  Fixture f(8, 4, c);  // 7 of 8 blocks in use below: maintain() wants to swap out
  f.finish(1, "", 64, 0);
  const auto p = f.prompt(80);
  for (RequestId id : {10, 11, 12}) {
    auto m = f.cache.match("", "", p);
    ASSERT_TRUE(m);
    EXPECT_EQ(m->tokens, 64);
    EXPECT_EQ(f.cache.attach_blocks_needed(*m), 0);
    ASSERT_TRUE(f.cache.attach(*m, id, f.ops, 1));
    ASSERT_TRUE(f.kv.allocate(id, 80));
    f.check();
  }
  EXPECT_TRUE(f.ops.empty());
  EXPECT_EQ(f.cache.num_conversations(), 1u);
  EXPECT_EQ(f.kv.usage().device.used(), 4 + 3);  // the prefix once, one own block each
  EXPECT_EQ(f.cache.counters().hit_tokens_device, 3 * 64);
  // Pinned: evicting would free nothing, so nothing is evicted or swapped.
  EXPECT_EQ(f.cache.blocks(KvTier::Device), 0);
  EXPECT_EQ(f.cache.make_room(4, 2, f.ops), 0);
  f.cache.maintain(2, f.ops);
  EXPECT_TRUE(f.ops.empty());
  f.check();
  // Request 10 ends holding the shared blocks and one more: its entry covers the old one.
  f.cache.release(10, "", "", p, 80, 0, 3);
  f.check();
  EXPECT_EQ(f.cache.num_conversations(), 1u);
  EXPECT_EQ(f.kv.usage().device.used(), 4 + 3);
  f.kv.free(11);
  f.kv.free(12);
  EXPECT_EQ(f.cache.blocks(KvTier::Device), 5);
  EXPECT_EQ(f.cache.make_room(5, 4, f.ops), 5);
  f.check();
}

// A match that ends inside a block: the sharer copies that block (copy-on-write).
TEST(ConversationCache, APartialLastBlockIsCopiedNotShared) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  Fixture f(16, 0, c);
  f.finish(1, "", 50, 0);
  auto m = f.cache.match("", "", f.prompt(80));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 50);
  EXPECT_EQ(f.cache.attach_blocks_needed(*m), 1);
  ASSERT_TRUE(f.cache.attach(*m, 7, f.ops, 1));
  ASSERT_EQ(f.ops.size(), 1u);
  EXPECT_EQ(f.ops[0].kind, KvOpKind::Copy);
  EXPECT_EQ(f.kv.usage().device.used(), 5);
  f.check();
}

// docs/security.md: a cached prompt of one tenant is never a hit for another, by
// hash or by name, and stays a hit for its own tenant.
TEST(ConversationCache, EntriesAreFoundOnlyByTheirOwnTenant) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  Fixture f(16, 0, c);
  f.finish(1, "", 50, 0, 0, "alice");
  f.finish(2, conversation_key("alice", "c1"), 40, 0);
  auto p = f.prompt(80);
  EXPECT_FALSE(f.cache.match("bob", "", p));
  EXPECT_FALSE(f.cache.match("bob", conversation_key("bob", "c1"), p));
  EXPECT_FALSE(f.cache.match("bob", conversation_key("alice", "c1"), p));
  auto by_hash = f.cache.match("alice", "", p);
  ASSERT_TRUE(by_hash);
  EXPECT_EQ(by_hash->tokens, 50);
  auto by_name = f.cache.match("alice", conversation_key("alice", "c1"), p);
  ASSERT_TRUE(by_name);
  EXPECT_EQ(by_name->tokens, 40);
  EXPECT_TRUE(f.cache.history(conversation_key("bob", "c1")).empty());
}

TEST(ConversationCache, LimitsConversationsAndExpiresIdleOnes) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.max_conversations = 2;
  c.idle_expiry_s = 100;
  Fixture f(16, 0, c);
  f.finish(1, "a", 20, 0);
  f.finish(2, "b", 20, 10);
  f.finish(3, "c", 20, 20);
  EXPECT_FALSE(f.cache.contains("a"));
  EXPECT_TRUE(f.cache.contains("b"));
  f.cache.expire(115);
  EXPECT_FALSE(f.cache.contains("b"));
  EXPECT_TRUE(f.cache.contains("c"));
  f.check();
}

// A prompt whose KV is cached entirely (the same prompt sent again) matches all but
// its last token, so admission still computes one token and samples from it.
TEST(ConversationCache, AFullyCachedPromptLeavesItsLastTokenToCompute) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  Fixture f(16, 0, c);
  f.finish(1, "", 48, 0);  // three whole blocks
  auto m = f.cache.match("", "", f.prompt(48));
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 47);
  f.finish(2, "c", 30, 0);
  m = f.cache.match("", "c", f.prompt(30));  // found by name
  ASSERT_TRUE(m);
  EXPECT_EQ(m->tokens, 29);
}

}  // namespace
}  // namespace seer
