// `seer serve`'s eviction Cost(l): measured on the backend at start-up for the
// pensieve eviction, analytic on request (--chunk-cost), refused when misspelt.
#include <gtest/gtest.h>

#include "common/error.h"
#include "server/serving_stack.h"
#include "support/test_paths.h"

namespace seer::server {
namespace {

ServingConfig stories(const std::string& policy) {
  ServingConfig c;
  c.model_path = seer::testing::source_dir() + "/models/stories260K.gguf";
  c.policy = policy;
  c.kv_blocks = 64;
  c.host_kv_blocks = 64;
  c.threads = 1;
  c.progress = false;
  return c;
}

TEST(ServingStackChunkCost, PensieveRanksChunksByTheBackendsMeasuredRecomputeTime) {
  ServingStack stack(stories("pensieve"));
  const auto& pts = stack.chunk_cost_points();
  ASSERT_GE(pts.size(), 2u);
  EXPECT_EQ(pts.front().first, 0);
  const ChunkCostFn& cost = stack.cache().config().chunk_cost;
  for (const auto& [l, seconds] : pts) {
    EXPECT_GT(seconds, 0.0);
    EXPECT_DOUBLE_EQ(cost(l), seconds) << "position " << l;  // the cache uses the measured points
  }
  EXPECT_GE(cost(pts.back().first), cost(0));
}

TEST(ServingStackChunkCost, AnalyticOnRequestAndForLruOrStatelessPolicies) {
  ServingConfig c = stories("pensieve");
  c.chunk_cost = "analytic";
  {
    ServingStack stack(c);
    EXPECT_TRUE(stack.chunk_cost_points().empty());
    EXPECT_DOUBLE_EQ(stack.cache().config().chunk_cost(100), 100.0 + 6.0 * stack.model_config().dim);
  }
  c.chunk_cost = "profile";
  c.eviction = "lru";
  EXPECT_TRUE(ServingStack(c).chunk_cost_points().empty());
  ServingConfig stateless = stories("vllm");
  stateless.prefix_reuse = false;  // with it (the default) vllm keeps K/V and ranks by the profile
  EXPECT_TRUE(ServingStack(stateless).chunk_cost_points().empty());
  c.chunk_cost = "measured";
  try {
    ServingStack bad(c);
    FAIL() << "a misspelt --chunk-cost was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--chunk-cost"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seer::server
