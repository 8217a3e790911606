#include "kv/block_pool.h"

#include <stdexcept>

#include <gtest/gtest.h>

#include "kv/kv_invariants.h"

namespace seer {
namespace {

TEST(BlockPool, AllocatesLowestFirstAndRecycles) {
  BlockPool pool(KvTier::Device, 3);
  EXPECT_EQ(pool.allocate(), 0);
  EXPECT_EQ(pool.allocate(), 1);
  EXPECT_EQ(pool.allocate(), 2);
  EXPECT_EQ(pool.allocate(), -1);
  EXPECT_TRUE(pool.release(1));
  EXPECT_EQ(pool.num_free(), 1);
  EXPECT_EQ(pool.allocate(), 1);
}

TEST(BlockPool, RefCounts) {
  BlockPool pool(KvTier::Host, 2);
  int32_t b = pool.allocate();
  pool.retain(b);
  EXPECT_EQ(pool.ref_count(b), 2);
  EXPECT_FALSE(pool.release(b));
  EXPECT_TRUE(pool.release(b));
  EXPECT_EQ(pool.num_free(), 2);
}

TEST(BlockPool, DoubleFreeAndBadIdsThrow) {
  BlockPool pool(KvTier::Device, 2);
  int32_t b = pool.allocate();
  pool.release(b);
  EXPECT_THROW(pool.release(b), std::logic_error);
  EXPECT_THROW(pool.retain(b), std::logic_error);
  EXPECT_THROW(pool.release(7), std::logic_error);
}

TEST(BlockPoolCheck, DetectsMismatchedOwnersAndLeaks) {
  BlockPool pool(KvTier::Device, 3);
  pool.allocate();  // 0
  pool.allocate();  // 1
  check_block_pool(pool, {1, 1, 0});
  try {
    check_block_pool(pool, {2, 1, 0});
    FAIL() << "expected a violation";
  } catch (const std::logic_error& e) {
    EXPECT_NE(std::string(e.what()).find("device block 0 has ref count 1 but 2 owner(s)"), std::string::npos)
        << e.what();
  }
  // Block 1 allocated but nobody owns it: a leak.
  EXPECT_THROW(check_block_pool(pool, {1, 0, 0}), std::logic_error);
  // Free block 2 claimed by an owner.
  EXPECT_THROW(check_block_pool(pool, {1, 1, 1}), std::logic_error);
  EXPECT_THROW(check_block_pool(pool, {1, 1}), std::logic_error);
}

}  // namespace
}  // namespace seer
