// Cost(l) measured on the CPU backend (runtime/chunk_cost_profile.h). Only the
// structure is checked, never a timing: which positions are profiled, that every
// time is positive and non-decreasing, and the refusals.
#include "runtime/chunk_cost_profile.h"

#include <gtest/gtest.h>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "test_model.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

std::unique_ptr<Backend> backend(const TestModel& m, int device_blocks) {
  CpuBackendOptions o;
  o.kv.block_size = 16;
  o.kv.device_blocks = device_blocks;
  o.threads = 1;
  return make_cpu_backend(m.config(), m.weights(), o);
}

TEST(ChunkCostProfile, PositionZeroPowersOfTwoAndTheLongestThatFits) {
  TestModel model(TestModelSpec{});
  auto be = backend(model, 20);  // 320 tokens
  ChunkCostProfileOptions o;
  o.chunk_tokens = 32;
  o.max_context = 4096;
  o.repeats = 1;
  o.time_limit_s = 60;  // every position
  auto pts = profile_chunk_cost(*be, o);
  ASSERT_EQ(pts.size(), 6u);
  const int32_t want[] = {0, 32, 64, 128, 256, 288};  // 288 + 32 = the pool's 320 tokens
  for (size_t i = 0; i < pts.size(); ++i) {
    EXPECT_EQ(pts[i].first, want[i]);
    EXPECT_GT(pts[i].second, 0.0);
    if (i > 0) {
      EXPECT_GE(pts[i].second, pts[i - 1].second);
    }
  }
  // The context limit caps the positions too.
  o.max_context = 100;
  pts = profile_chunk_cost(*be, o);
  ASSERT_EQ(pts.size(), 4u);
  EXPECT_EQ(pts[2].first, 64);
  EXPECT_EQ(pts.back().first, 68);

  ChunkCostFn cost = measured_chunk_cost(*be, o);
  EXPECT_GT(cost(50), 0.0);
}

TEST(ChunkCostProfile, WithoutTimeLeftStillMeasuresTheEnds) {
  TestModel model(TestModelSpec{});
  auto be = backend(model, 64);
  ChunkCostProfileOptions o;
  o.max_context = 1024;
  o.repeats = 1;
  o.time_limit_s = 0;
  auto pts = profile_chunk_cost(*be, o);
  ASSERT_GE(pts.size(), 2u);
  EXPECT_EQ(pts.front().first, 0);
  EXPECT_EQ(pts.back().first, 1024 - 32);
}

TEST(ChunkCostProfile, RefusesAPoolWithoutRoomForAChunkAndBadOptions) {
  TestModel model(TestModelSpec{});
  auto be = backend(model, 1);  // 16 tokens
  ChunkCostProfileOptions o;
  o.max_context = 1024;
  EXPECT_THROW(profile_chunk_cost(*be, o), Error);
  o.chunk_tokens = 16;
  EXPECT_EQ(profile_chunk_cost(*be, o).size(), 1u);  // only position 0 fits
  o.max_context = 0;
  EXPECT_THROW(profile_chunk_cost(*be, o), Error);
  o.max_context = 16;
  o.repeats = 0;
  EXPECT_THROW(profile_chunk_cost(*be, o), Error);
}

}  // namespace
}  // namespace seer
