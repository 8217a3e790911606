#include "kv/chunk_cost.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "common/error.h"

namespace seer {
namespace {

TEST(ChunkCost, LinearBetweenPointsFlatBeforeAndAlongTheLastSegmentAfter) {
  ChunkCostFn c = interpolated_chunk_cost({{64, 3.0}, {0, 1.0}, {32, 2.0}});  // any order
  EXPECT_DOUBLE_EQ(c(0), 1.0);
  EXPECT_DOUBLE_EQ(c(-5), 1.0);
  EXPECT_DOUBLE_EQ(c(16), 1.5);
  EXPECT_DOUBLE_EQ(c(32), 2.0);
  EXPECT_DOUBLE_EQ(c(48), 2.5);
  EXPECT_DOUBLE_EQ(c(64), 3.0);
  EXPECT_DOUBLE_EQ(c(128), 5.0);  // slope 1/32 continues
  EXPECT_DOUBLE_EQ(interpolated_chunk_cost({{0, 7.0}})(1000), 7.0);
}

TEST(ChunkCost, ANegativeExtrapolationIsClampedAtZero) {
  ChunkCostFn c = interpolated_chunk_cost({{0, 4.0}, {10, 1.0}});
  EXPECT_DOUBLE_EQ(c(20), 0.0);
}

TEST(ChunkCost, RefusesBadPoints) {
  EXPECT_THROW(interpolated_chunk_cost({}), Error);
  EXPECT_THROW(interpolated_chunk_cost({{0, 1.0}, {0, 2.0}}), Error);
  EXPECT_THROW(interpolated_chunk_cost({{0, -1.0}}), Error);
  EXPECT_THROW(interpolated_chunk_cost({{0, std::numeric_limits<double>::quiet_NaN()}}), Error);
  EXPECT_THROW(interpolated_chunk_cost({{0, std::numeric_limits<double>::infinity()}}), Error);
}

}  // namespace
}  // namespace seer
