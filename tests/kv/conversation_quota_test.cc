// The conversation cap shared by tenants (kv/conversation_quota.h): a tenant that
// floods the cache evicts its own entries, prefix entries before conversations; a
// per-tenant cap holds; an evicted conversation leaves a tombstone that its next
// turn finds once, a deleted one none.
#include <gtest/gtest.h>

#include "kv/conversation_cache_fixture.h"
#include "kv/conversation_quota.h"

namespace seer {
namespace {

using testing_kv::Fixture;

ConversationCacheConfig capped(int32_t total, int32_t per_tenant = 0) {
  ConversationCacheConfig c = Fixture::chunk_of_one_block();
  c.prefix_reuse = true;
  c.max_conversations = total;
  c.max_conversations_per_tenant = per_tenant;
  return c;
}

TEST(ConversationQuota, AFloodingTenantEvictsItsOwnEntriesNotAnothers) {
  Fixture f(64, 8, capped(4));
  f.finish(1, conversation_key("a", "chat"), 20, 0);
  f.finish(2, conversation_key("a", "notes"), 20, 1);
  RequestId id = 10;
  for (int i = 0; i < 50; ++i) {
    f.finish(id++, "", 17 + i % 3, 2 + i, 0, "b");  // stateless: anonymous prefix entries
    f.finish(id++, conversation_key("b", "c" + std::to_string(i)), 20, 2.5 + i);
  }
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "chat")));
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "notes")));
  EXPECT_EQ(f.cache.tenant_entries("a"), 2);
  EXPECT_EQ(f.cache.tenant_entries("b"), 2);
  EXPECT_EQ(f.cache.num_conversations(), 4u);
  EXPECT_FALSE(f.cache.take_evicted(conversation_key("a", "chat")));
  EXPECT_TRUE(f.cache.take_evicted(conversation_key("b", "c0"))) << "an evicted conversation leaves a tombstone";
  EXPECT_FALSE(f.cache.take_evicted(conversation_key("b", "c0"))) << "found once";
}

TEST(ConversationQuota, PrefixEntriesGoBeforeConversationsOfTheSameTenant) {
  Fixture f(64, 8, capped(3));
  f.finish(1, conversation_key("a", "chat"), 20, 0);
  f.finish(2, "", 40, 1, 0, "a");
  f.finish(3, conversation_key("a", "later"), 20, 2);
  f.finish(4, conversation_key("a", "last"), 20, 3);  // over the cap: the prefix entry goes
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "chat")));
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "later")));
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "last")));
  EXPECT_FALSE(f.cache.match("a", "", f.prompt(41)).has_value());
}

TEST(ConversationQuota, APerTenantCapHoldsWhileTheSharedCapHasRoom) {
  Fixture f(64, 8, capped(100, 2));
  for (int i = 0; i < 5; ++i) f.finish(i + 1, conversation_key("a", "c" + std::to_string(i)), 20, i);
  EXPECT_EQ(f.cache.tenant_entries("a"), 2);
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "c3")));
  EXPECT_TRUE(f.cache.contains(conversation_key("a", "c4")));
  EXPECT_TRUE(f.cache.take_evicted(conversation_key("a", "c0")));
}

TEST(ConversationQuota, DeleteAndExpiryAndReuse) {
  ConversationCacheConfig c = capped(0);
  c.idle_expiry_s = 10;
  Fixture f(64, 8, c);
  f.finish(1, conversation_key("a", "gone"), 20, 0);
  f.finish(2, conversation_key("a", "deleted"), 20, 0);
  EXPECT_TRUE(f.cache.erase(conversation_key("a", "deleted")));
  f.cache.expire(100);
  f.check();
  EXPECT_FALSE(f.cache.take_evicted(conversation_key("a", "deleted"))) << "a DELETE leaves no tombstone";
  f.finish(3, conversation_key("a", "gone"), 20, 101);  // the id starts afresh: no tombstone left
  EXPECT_FALSE(f.cache.take_evicted(conversation_key("a", "gone")));
}

TEST(ConversationQuota, TombstonesAreBounded) {
  ConversationQuota q({1, 0, 3});
  for (int i = 0; i < 10; ++i) q.evicted("t/c" + std::to_string(i));
  EXPECT_EQ(q.tombstones(), 3u);
  EXPECT_TRUE(q.take_tombstone("t/c9"));
  EXPECT_FALSE(q.take_tombstone("t/c0"));
}

TEST(ConversationQuota, TheFullestTenantIsOverQuota) {
  ConversationQuota q({3, 0, 8});
  q.added("a");
  q.added("b");
  q.added("b");
  EXPECT_FALSE(q.over_quota("b").has_value());
  q.added("a");
  EXPECT_EQ(q.over_quota("a"), "a") << "a tie: the tenant who added";
  q.added("b");
  EXPECT_EQ(q.over_quota("a"), "b");
}

}  // namespace
}  // namespace seer
