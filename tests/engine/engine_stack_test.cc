// EngineStack (engine/engine_stack.h): the one wiring of KV manager, scheduler with
// its conversation cache, predictor, drafter and engine that serve and sim share.
#include <gtest/gtest.h>

#include "engine/engine_stack.h"
#include "engine/fake_executor.h"
#include "predict/length_predictor.h"

namespace seer {
namespace {

using testing::FakeExecutor;

EngineStackParts parts(const std::string& policy) {
  EngineStackParts p;
  p.kv = KvConfig{16, 64, 32, 100};
  p.scheduler.policy = policy;
  p.engine.check_invariants = true;
  return p;
}

TEST(EngineStack, TheSchedulerOwnsACacheOnlyForPoliciesThatKeepKv) {
  VirtualClock clock;
  FakeExecutor executor(KvConfig{16, 64, 32, 100}, 1000);
  EngineStack stateless(parts("vllm"), executor, clock);
  EXPECT_EQ(stateless.scheduler().conversations().cache(), nullptr);
  EngineStack pensieve(parts("pensieve"), executor, clock);
  ASSERT_NE(pensieve.scheduler().conversations().cache(), nullptr);
  EXPECT_TRUE(pensieve.scheduler().conversations().cache()->config().host_tier);
  EXPECT_EQ(&pensieve.engine().scheduler(), &pensieve.scheduler());
  EXPECT_EQ(&pensieve.engine().kv(), &pensieve.kv());
}

TEST(EngineStack, TheEngineUsesTheStacksPredictorAndRunsATurnIntoTheCache) {
  VirtualClock clock;
  FakeExecutor executor(KvConfig{16, 64, 32, 100}, 1000);
  EngineStackParts p = parts("pensieve");
  p.predictor = std::make_unique<OraclePredictor>(LengthBuckets::equal(100, 10));
  EngineStack stack(std::move(p), executor, clock);
  EXPECT_EQ(stack.engine().config().predictor, stack.predictor());
  Request r;
  r.prompt_tokens.assign(40, 7);
  r.sampling.max_tokens = 5;
  r.forced_output_len = 5;
  r.conversation = "c";
  const RequestId id = stack.engine().add_request(std::move(r));
  EXPECT_EQ(stack.engine().requests().get(id).predicted_bucket, 0);  // 5 tokens in [0, 10)
  for (int i = 0; i < 100 && stack.engine().has_unfinished(); ++i) stack.engine().step();
  ASSERT_FALSE(stack.engine().has_unfinished());
  EXPECT_EQ(stack.scheduler().conversations().cache()->history("c").size(), 45u);
}

}  // namespace
}  // namespace seer
