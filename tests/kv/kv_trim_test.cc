// Layer groups and the trimming of sliding-window K/V (kv/kv_layer_groups.h,
// KvManager::trim): blocks no window reaches are freed, the reservation shrinks with
// them, and a prefix is reused only where its windows survive.
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "kv/kv_layer_groups.h"
#include "kv/kv_manager.h"

namespace seer {
namespace {

std::vector<bool> gemma_layers(int layers, int period) {
  std::vector<bool> local;
  for (int l = 0; l < layers; ++l) local.push_back(l % period < period - 1);
  return local;
}

TEST(KvLayerGroups, GlobalLayersSetTheBlockAndLocalOnesFillGroupsOfThatSize) {
  // Gemma 3 1B: 26 layers, every sixth global (5, 11, 17, 23).
  const KvLayerGroups g3 = kv_layer_groups(gemma_layers(26, 6));
  EXPECT_EQ(g3.layers_per_block, 4);
  EXPECT_EQ(g3.groups, 7);  // 22 local layers in 6 groups of 4, the last padded
  EXPECT_EQ(g3.local_groups, 6);
  EXPECT_EQ(g3.group[5], 0);
  EXPECT_EQ(g3.slot[5], 0);
  EXPECT_EQ(g3.slot[23], 3);
  EXPECT_EQ(g3.group[0], 1);
  EXPECT_EQ(g3.group[3], 1);
  EXPECT_EQ(g3.group[4], 2);  // the fifth local layer starts group 2
  EXPECT_EQ(g3.slot[4], 0);
  EXPECT_EQ(g3.group[6], 2);
  EXPECT_EQ(g3.slot[6], 1);
  EXPECT_EQ(g3.group[25], 6);
  // Every (group, slot) is one layer's.
  std::set<std::pair<int32_t, int32_t>> places;
  for (size_t l = 0; l < 26; ++l) EXPECT_TRUE(places.insert({g3.group[l], g3.slot[l]}).second) << l;

  const KvLayerGroups g2 = kv_layer_groups(gemma_layers(26, 2));  // Gemma 2: alternating
  EXPECT_EQ(g2.layers_per_block, 13);
  EXPECT_EQ(g2.groups, 2);
  EXPECT_EQ(g2.local_groups, 1);
}

TEST(KvLayerGroups, OneGroupWithoutAMixOfLocalAndGlobalLayersOrWhenAskedTo) {
  for (const std::vector<bool>& local : {std::vector<bool>(4, false), std::vector<bool>(4, true)}) {
    const KvLayerGroups g = kv_layer_groups(local);
    EXPECT_EQ(g.groups, 1);
    EXPECT_EQ(g.local_groups, 0);
    EXPECT_EQ(g.layers_per_block, 4);
    EXPECT_EQ(g.slot, (std::vector<int32_t>{0, 1, 2, 3}));
  }
  const KvLayerGroups full = kv_layer_groups(gemma_layers(12, 6), /*split=*/false);
  EXPECT_EQ(full.groups, 1);
  EXPECT_EQ(full.layers_per_block, 12);
  KvConfig kv{4, 8, 0, 0};
  full.apply(kv, 512);
  EXPECT_EQ(kv.window, 0);  // nothing trimmed
}

TEST(KvTrim, RejectsLayoutsWithoutAGlobalGroupOrWindow) {
  EXPECT_THROW(KvManager(KvConfig{4, 8, 0, 0, 0}), Error);
  EXPECT_THROW(KvManager(KvConfig{4, 8, 0, 0, 2, 2, 8}), Error);  // every group local
  EXPECT_THROW(KvManager(KvConfig{4, 8, 0, 0, 2, 1, 0}), Error);  // local groups need a window
  EXPECT_THROW(KvManager(KvConfig{4, 8, 0, 0, 2, 0, 8}), Error);  // a window needs local groups
}

// Block size 4, one global and two local groups, window 6.
KvManager windowed(int32_t device = 64, int32_t host = 0) { return KvManager(KvConfig{4, device, host, 64, 3, 2, 6}); }

TEST(KvTrim, FreesLocalBlocksBehindTheWindowAndShrinksTheReservation) {
  KvManager kv = windowed();
  EXPECT_EQ(kv.config().blocks_for(40), 30);
  EXPECT_EQ(kv.config().first_attended_block(24), 4);  // the query at 24 sees 19..24
  ASSERT_TRUE(kv.reserve(1, kv.blocks_for(1, 40)));
  ASSERT_TRUE(kv.allocate(1, 24));
  EXPECT_EQ(kv.table(1).num_device, 18);
  const int32_t unused = kv.usage().reserved_unused;
  const int32_t available = kv.usage().available();
  kv.trim(1, 24);
  kv.check_invariants();
  const KvTable& t = kv.table(1);
  EXPECT_EQ(t.num_device, 10);
  EXPECT_EQ(t.num_trimmed, 8);  // logical blocks 0..3, two local entries each
  for (int32_t i = 0; i < 4; ++i) {
    EXPECT_GE(t.device[static_cast<size_t>(3 * i)], 0) << i;  // the global group keeps everything
    EXPECT_TRUE(t.trimmed(3 * i + 1) && t.trimmed(3 * i + 2)) << i;
  }
  EXPECT_FALSE(t.trimmed(13));
  EXPECT_EQ(t.reserved, 22);
  EXPECT_EQ(kv.usage().reserved_unused, unused);  // what the request still needs stays promised
  EXPECT_EQ(kv.usage().available(), available + 8);
  EXPECT_TRUE(t.resident(6));
  EXPECT_TRUE(t.on_device(0));
  EXPECT_FALSE(t.recomputed(0));
  EXPECT_EQ(kv.blocks_for(1, 40), 22);
  EXPECT_EQ(kv.tokens_for(1, 22), 40);
  // Growth to the reserved end still succeeds from the shrunken reservation.
  ASSERT_TRUE(kv.allocate(1, 40));
  EXPECT_EQ(kv.usage().reserved_unused, 0);
  kv.trim(1, 24);  // nothing new
  EXPECT_EQ(kv.table(1).num_trimmed, 8);
  kv.trim(1, 40);
  EXPECT_EQ(kv.table(1).num_trimmed, 16);
  kv.check_invariants();
  kv.free(1);
  kv.check_invariants();
  EXPECT_EQ(kv.usage().device.free, 64);
}

TEST(KvTrim, OnlyLayoutsWithLocalGroupsTrim) {
  KvManager kv(KvConfig{4, 16, 0, 64});
  ASSERT_TRUE(kv.allocate(1, 40));
  kv.trim(1, 40);
  EXPECT_EQ(kv.table(1).num_device, 10);
  EXPECT_TRUE(kv.continuable(1, 4));
}

TEST(KvTrim, APrefixContinuesOnlyWhereItsWindowSurvives) {
  KvManager kv = windowed();
  ASSERT_TRUE(kv.allocate(1, 24));
  kv.trim(1, 24);
  EXPECT_TRUE(kv.continuable(1, 24));
  EXPECT_TRUE(kv.continuable(1, 21));   // the query at 21 sees 16..21: blocks 4 and 5
  EXPECT_FALSE(kv.continuable(1, 20));  // 15..20: block 3 too, trimmed
  EXPECT_FALSE(kv.continuable(1, 3));
  EXPECT_TRUE(kv.continuable(2, 3));  // an unknown owner has nothing trimmed
}

TEST(KvTrim, SharingATrimmedPrefixSharesTheTrimAndCopiesOnlyWhatIsHeld) {
  KvManager kv = windowed();
  ASSERT_TRUE(kv.allocate(1, 22));  // 6 logical blocks, the last partial
  kv.trim(1, 22);                   // blocks 0..3 (the query at 22 sees 17..22)
  EXPECT_EQ(kv.table(1).num_trimmed, 8);
  // Full blocks 0..4 shared (5 global + 2 local entries), block 5 copied (3 entries).
  EXPECT_EQ(kv.share_copies(1, 22), 3);
  std::vector<KvOp> ops;
  const int32_t free_before = kv.usage().device.free;
  ASSERT_TRUE(kv.share_prefix(1, 2, 22, ops));
  kv.check_invariants();
  EXPECT_EQ(ops.size(), 3u);
  EXPECT_EQ(kv.usage().device.free, free_before - 3);
  EXPECT_EQ(kv.table(2).num_trimmed, 8);
  EXPECT_EQ(kv.table(2).device[1], KvTable::kTrimmed);
  EXPECT_EQ(kv.table(2).device[0], kv.table(1).device[0]);
  kv.free(1);
  kv.free(2);
  kv.check_invariants();
  EXPECT_EQ(kv.usage().device.free, 64);
}

TEST(KvTrim, ARecomputedLeadingBlockGetsItsTrimmedBlocksBackAndLosesThemAgain) {
  KvManager kv = windowed(64, 16);
  ASSERT_TRUE(kv.allocate(1, 24));
  kv.trim(1, 24);
  const KvOwner cache = KvOwner::cache(-1);
  kv.transfer(1, cache);
  // The conversation cache drops the leading block: it is recomputed, every group.
  EXPECT_EQ(kv.release_block(cache, 0, KvTier::Device), 1);
  EXPECT_TRUE(kv.table(cache).recomputed(0));
  EXPECT_FALSE(kv.table(cache).on_device(0));
  EXPECT_FALSE(kv.table(cache).on_host(0));
  // A clean host copy of a trimmed block copies only its global entry.
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.copy_block_to_host(cache, 1, ops));
  EXPECT_EQ(ops.size(), 1u);
  EXPECT_TRUE(kv.table(cache).on_host(1));
  kv.check_invariants();
  kv.transfer(cache, 2);
  ops.clear();
  const int32_t free_before = kv.usage().device.free;
  ASSERT_TRUE(kv.make_resident(2, ops));
  kv.check_invariants();
  EXPECT_TRUE(ops.empty());                           // block 1 kept its device copy
  EXPECT_EQ(kv.usage().device.free, free_before - 3);  // block 0: global + both local entries
  EXPECT_EQ(kv.table(2).num_trimmed, 6);
  EXPECT_TRUE(kv.table(2).resident(6));
  kv.trim(2, 24);
  EXPECT_EQ(kv.table(2).num_trimmed, 8);
  kv.check_invariants();
}

TEST(KvTrim, SwappingKeepsTheTrimAndMovesOnlyHeldBlocks) {
  KvManager kv = windowed(64, 64);
  ASSERT_TRUE(kv.allocate(1, 24));
  kv.trim(1, 24);
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.swap_out(1, ops));
  EXPECT_EQ(ops.size(), 10u);
  EXPECT_EQ(kv.table(1).num_host, kv.blocks_for(1, 24));
  kv.check_invariants();
  ops.clear();
  ASSERT_TRUE(kv.swap_in(1, ops));
  EXPECT_EQ(ops.size(), 10u);
  EXPECT_TRUE(kv.table(1).resident(6));
  EXPECT_EQ(kv.table(1).num_trimmed, 8);
  kv.check_invariants();
}

TEST(KvTrim, TruncatingIntoTrimmedBlocksForgetsTheirTrim) {
  KvManager kv = windowed();
  ASSERT_TRUE(kv.allocate(1, 24));
  kv.trim(1, 24);
  kv.truncate(1, 8);
  EXPECT_EQ(kv.table(1).num_trimmed, 4);
  EXPECT_EQ(kv.table(1).trimmed_below, 2);
  kv.check_invariants();
}

}  // namespace
}  // namespace seer
