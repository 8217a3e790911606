#include "kv/kv_manager.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace seer {
namespace {

KvManager make_kv(int32_t device, int32_t host = 0, int32_t block_size = 4) {
  return KvManager(KvConfig{block_size, device, host, 1024});
}

TEST(KvManager, RejectsBadConfig) {
  EXPECT_THROW(KvManager(KvConfig{0, 8, 0, 0}), Error);
  EXPECT_THROW(KvManager(KvConfig{16, 0, 0, 0}), Error);
  EXPECT_THROW(KvManager(KvConfig{16, 8, -1, 0}), Error);
}

TEST(KvManager, AllocateGrowsTableByBlocks) {
  KvManager kv = make_kv(8);
  EXPECT_EQ(kv.config().blocks_for(0), 0);
  EXPECT_EQ(kv.config().blocks_for(4), 1);
  EXPECT_EQ(kv.config().blocks_for(5), 2);
  ASSERT_TRUE(kv.allocate(1, 5));
  EXPECT_EQ(kv.table(1).device, (std::vector<int32_t>{0, 1}));
  EXPECT_TRUE(kv.allocate(1, 8));  // already covered
  EXPECT_EQ(kv.table(1).num_device, 2);
  ASSERT_TRUE(kv.allocate(1, 9));
  EXPECT_EQ(kv.table(1).device.size(), 3u);
  EXPECT_EQ(kv.usage().device.used(), 3);
  EXPECT_EQ(kv.usage().device.free, 5);
  EXPECT_DOUBLE_EQ(kv.usage().utilization(), 3.0 / 8);
  EXPECT_TRUE(kv.table(1).resident(kv.config().blocks_for(12)));
  EXPECT_FALSE(kv.table(1).resident(kv.config().blocks_for(13)));
  kv.check_invariants();
}

TEST(KvManager, FailedAllocationChangesNothing) {
  KvManager kv = make_kv(4);
  ASSERT_TRUE(kv.allocate(1, 12));
  EXPECT_FALSE((kv.blocks_needed(2, 8) <= kv.usage().available()));
  EXPECT_EQ(kv.blocks_needed(2, 8), 2);
  EXPECT_FALSE(kv.allocate(2, 8));
  EXPECT_FALSE(kv.has(2));
  EXPECT_EQ(kv.usage().device.free, 1);
  EXPECT_TRUE(kv.allocate(2, 4));
  kv.check_invariants();
}

TEST(KvManager, FreeReturnsEveryBlock) {
  KvManager kv = make_kv(8, 8);
  ASSERT_TRUE(kv.allocate(1, 16));
  ASSERT_TRUE(kv.allocate(2, 3));
  kv.free(1);
  EXPECT_FALSE(kv.has(1));
  EXPECT_EQ(kv.usage().device.free, 7);
  kv.free(2);
  kv.free(99);  // unknown: no effect
  EXPECT_EQ(kv.usage().device.free, 8);
  kv.check_invariants();
}

TEST(KvManager, ReservationIsAPromise) {
  KvManager kv = make_kv(10);
  ASSERT_TRUE(kv.reserve(1, 6));
  EXPECT_EQ(kv.usage().reserved_unused, 6);
  EXPECT_EQ(kv.usage().available(), 4);
  EXPECT_EQ(kv.usage().device.free, 10);
  // Another request cannot take promised blocks.
  EXPECT_FALSE(kv.reserve(2, 5));
  EXPECT_FALSE(kv.allocate(2, 5 * 4));
  ASSERT_TRUE(kv.allocate(2, 4 * 4));
  EXPECT_EQ(kv.usage().available(), 0);
  // Growth within the reservation succeeds with nothing available.
  EXPECT_EQ(kv.blocks_needed(1, 24), 0);
  ASSERT_TRUE(kv.allocate(1, 24));
  EXPECT_EQ(kv.usage().reserved_unused, 0);
  EXPECT_FALSE(kv.allocate(1, 25));  // beyond it, nothing is available
  kv.check_invariants();
  kv.free(1);
  EXPECT_EQ(kv.usage().reserved_unused, 0);
  EXPECT_EQ(kv.usage().available(), 6);
  kv.check_invariants();
}

TEST(KvManager, ReservationCountsHeldBlocks) {
  KvManager kv = make_kv(10);
  ASSERT_TRUE(kv.allocate(1, 12));  // 3 blocks
  ASSERT_TRUE(kv.reserve(1, 5));
  EXPECT_EQ(kv.usage().reserved_unused, 2);
  ASSERT_TRUE(kv.reserve(1, 2));  // below what it holds: nothing unused
  EXPECT_EQ(kv.usage().reserved_unused, 0);
  EXPECT_FALSE(kv.reserve(1, 11));  // 8 more unused than the 7 available
  EXPECT_EQ(kv.table(1).reserved, 2);
  EXPECT_TRUE(kv.reserve(1, 10));
  EXPECT_EQ(kv.usage().reserved_unused, 7);
  kv.check_invariants();
}

TEST(KvManager, SwapOutAndInProduceOpsInOrder) {
  KvManager kv = make_kv(4, 4);
  ASSERT_TRUE(kv.allocate(1, 4));
  ASSERT_TRUE(kv.allocate(2, 12));  // blocks 1, 2, 3
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.swap_out(2, ops));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0], (KvOp{KvOpKind::SwapOut, 1, 0}));
  EXPECT_EQ(ops[2], (KvOp{KvOpKind::SwapOut, 3, 2}));
  EXPECT_EQ(kv.table(2).num_device, 0);
  EXPECT_EQ(kv.table(2).num_host, 3);
  EXPECT_EQ(kv.table(2).device, (std::vector<int32_t>{-1, -1, -1}));
  EXPECT_EQ(kv.table(2).host, (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(kv.usage().device.free, 3);
  EXPECT_FALSE(kv.table(2).resident(kv.config().blocks_for(1)));
  kv.check_invariants();

  ASSERT_TRUE(kv.allocate(3, 8));  // takes two of the freed device blocks
  ops.clear();
  EXPECT_FALSE(kv.swap_in(2, ops));
  EXPECT_TRUE(ops.empty());
  kv.free(3);
  ASSERT_TRUE(kv.swap_in(2, ops));
  ASSERT_EQ(ops.size(), 3u);
  EXPECT_EQ(ops[0].kind, KvOpKind::SwapIn);
  EXPECT_EQ(ops[0].src, 0);
  EXPECT_EQ(kv.table(2).num_host, 0);
  EXPECT_EQ(kv.usage().host.free, 4);
  EXPECT_TRUE(kv.table(2).resident(kv.config().blocks_for(12)));
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(kv.table(2).device[i], ops[i].dst);
  kv.check_invariants();
}

TEST(KvManager, SwapOutFailsWhenHostIsFull) {
  KvManager kv = make_kv(4, 1);
  ASSERT_TRUE(kv.allocate(1, 8));
  std::vector<KvOp> ops;
  EXPECT_FALSE(kv.swap_out(1, ops));
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(kv.table(1).num_device, 2);
  kv.check_invariants();
}

TEST(KvManager, SwapOutReleasesReservation) {
  KvManager kv = make_kv(8, 8);
  ASSERT_TRUE(kv.reserve(1, 6));
  ASSERT_TRUE(kv.allocate(1, 8));
  EXPECT_EQ(kv.usage().reserved_unused, 4);
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.swap_out(1, ops));
  EXPECT_EQ(kv.table(1).reserved, 0);
  EXPECT_EQ(kv.usage().reserved_unused, 0);
  EXPECT_EQ(kv.usage().available(), 8);
  kv.check_invariants();
}

TEST(KvManager, TruncateReleasesTail) {
  KvManager kv = make_kv(8);
  ASSERT_TRUE(kv.allocate(1, 20));  // 5 blocks
  kv.truncate(1, 9);   // keeps 3
  EXPECT_EQ(kv.table(1).num_device, 3);
  EXPECT_EQ(kv.usage().device.free, 5);
  kv.truncate(1, 0);
  EXPECT_EQ(kv.table(1).logical_blocks(), 0);
  kv.check_invariants();
}

TEST(KvManager, ReleasingLeadingBlocksKeepsPositions) {
  KvManager kv = make_kv(8, 8);
  ASSERT_TRUE(kv.allocate(1, 16));
  for (int32_t i = 0; i < 2; ++i) EXPECT_TRUE(kv.release_block(1, i, KvTier::Device));
  EXPECT_EQ(kv.table(1).logical_blocks(), 4);
  EXPECT_EQ(kv.table(1).device[0], -1);
  EXPECT_EQ(kv.table(1).device[1], -1);
  EXPECT_GE(kv.table(1).device[2], 0);
  EXPECT_EQ(kv.table(1).num_device, 2);
  kv.check_invariants();
  // Drop leading blocks that live on the host.
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.swap_out(1, ops));
  EXPECT_EQ(kv.table(1).num_host, 2);
  EXPECT_FALSE(kv.release_block(1, 0, KvTier::Host));  // released already
  EXPECT_TRUE(kv.release_block(1, 2, KvTier::Host));
  EXPECT_EQ(kv.table(1).num_host, 1);
  EXPECT_EQ(kv.usage().host.free, 7);
  kv.check_invariants();
}

TEST(KvManager, SharedPrefixIsReferenceCounted) {
  KvManager kv = make_kv(8);
  ASSERT_TRUE(kv.allocate(1, 12));
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.share_prefix(1, 2, 8, ops));
  EXPECT_TRUE(ops.empty());
  EXPECT_EQ(kv.table(2).device, (std::vector<int32_t>{0, 1}));
  EXPECT_EQ(kv.usage().device.used(), 3);
  kv.check_invariants();
  kv.free(1);
  EXPECT_EQ(kv.usage().device.used(), 2);  // still owned by request 2
  kv.check_invariants();
  ASSERT_TRUE(kv.allocate(2, 12));
  kv.free(2);
  EXPECT_EQ(kv.usage().device.free, 8);
  kv.check_invariants();
}

// Full device blocks are shared; a partial last block is copied before dst writes
// to it, a host-only block copied up, a block src lacks given fresh.
TEST(KvManager, SharingAPrefixCopiesWhatItCannotReference) {
  KvManager kv = make_kv(16, 4);
  const KvOwner cache = KvOwner::cache(1);
  ASSERT_TRUE(kv.allocate(cache, 16));  // a cache owner with blocks 0..3
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.copy_block_to_host(cache, 1, ops));
  kv.release_block(cache, 1, KvTier::Device);  // block 1 host-only
  kv.release_block(cache, 0, KvTier::Device);  // block 0 nowhere
  ops.clear();
  EXPECT_EQ(kv.share_copies(cache, 14), 3);  // blocks 0, 1 and the partial 3
  ASSERT_TRUE(kv.share_prefix(cache, 5, 14, ops));
  const std::vector<int32_t>& own = kv.table(5).device;
  ASSERT_EQ(own.size(), 4u);
  EXPECT_EQ(own[2], kv.table(cache).device[2]);  // shared
  EXPECT_NE(own[3], kv.table(cache).device[3]);  // copied
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0], (KvOp{KvOpKind::SwapIn, kv.table(cache).host[1], own[1]}));
  EXPECT_EQ(ops[1], (KvOp{KvOpKind::Copy, kv.table(cache).device[3], own[3]}));
  EXPECT_TRUE(kv.held_by_request(cache, 2));
  EXPECT_FALSE(kv.held_by_request(cache, 3));
  EXPECT_EQ(kv.usage().cache_only, 1);  // block 3 of the owner
  kv.check_invariants();
  // The request's reference keeps block 2 when the cache lets go.
  EXPECT_FALSE(kv.release_block(cache, 2, KvTier::Device));
  EXPECT_EQ(kv.usage().cache_only, 1);
  kv.free(5);
  EXPECT_EQ(kv.usage().cache_only, 1);
  kv.check_invariants();
}

TEST(KvManager, SharingFailsChangingNothingWhenNoBlockIsLeftForTheCopy) {
  KvManager kv = make_kv(3);
  const KvOwner cache = KvOwner::cache(1);
  ASSERT_TRUE(kv.allocate(cache, 10));  // blocks 0..2, the last one partial
  std::vector<KvOp> ops;
  EXPECT_FALSE(kv.share_prefix(cache, 5, 10, ops));
  EXPECT_FALSE(kv.has(5));
  EXPECT_TRUE(ops.empty());
  ASSERT_TRUE(kv.share_prefix(cache, 5, 8, ops));  // whole blocks only: nothing to copy
  EXPECT_EQ(kv.usage().device.used(), 3);
  kv.check_invariants();
}

// A transfer between a request and a cache owner moves its references' kind.
TEST(KvManager, CacheOnlyBlocksFollowTransfers) {
  KvManager kv = make_kv(8);
  const KvOwner cache = KvOwner::cache(1);
  ASSERT_TRUE(kv.allocate(1, 8));
  EXPECT_EQ(kv.usage().cache_only, 0);
  kv.transfer(1, cache);
  EXPECT_EQ(kv.usage().cache_only, 2);
  std::vector<KvOp> ops;
  ASSERT_TRUE(kv.share_prefix(cache, 2, 8, ops));
  EXPECT_EQ(kv.usage().cache_only, 0);
  kv.transfer(2, KvOwner::cache(2));
  EXPECT_EQ(kv.usage().cache_only, 2);
  kv.check_invariants();
}

// An allocation that needs exactly the available blocks fits; one token more does not.
TEST(KvManager, AnAllocationNeedingExactlyTheAvailableBlocksFits) {
  KvManager kv = make_kv(4);
  ASSERT_TRUE(kv.allocate(1, 8));
  EXPECT_EQ(kv.blocks_needed(2, 8), kv.usage().available());
  EXPECT_FALSE(kv.allocate(2, 9));
  EXPECT_TRUE(kv.allocate(2, 8));
  EXPECT_EQ(kv.usage().available(), 0);
  EXPECT_FALSE(kv.allocate(1, 9));
  kv.check_invariants();
}

}  // namespace
}  // namespace seer
