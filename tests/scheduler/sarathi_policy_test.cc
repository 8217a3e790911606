#include <random>
#include <set>

#include <gtest/gtest.h>

#include "common/error.h"
#include "scheduler/iteration_profile.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig sarathi_config(int32_t budget, PreemptionMode mode = PreemptionMode::Recompute) {
  SchedulerConfig c;
  c.policy = "sarathi";
  c.token_budget = budget;
  c.preemption = mode;
  c.watermark = 0;
  return c;
}

TEST(SarathiPolicy, ChunksTheLastPromptToFillTheBudgetExactly) {
  SchedulerHarness h(sarathi_config(64), KvConfig{16, 64, 0, 0});
  RequestId a = h.add(100, 3).id;
  RequestId b = h.add(50, 3).id;
  StepPlan p1 = h.step();
  ASSERT_EQ(p1.chunks.size(), 1u);
  EXPECT_EQ(p1.chunks[0].request, a);
  EXPECT_EQ(p1.chunks[0].num_tokens, 64);
  EXPECT_FALSE(p1.chunks[0].sample);
  StepPlan p2 = h.step();
  ASSERT_EQ(p2.chunks.size(), 2u);
  EXPECT_EQ(p2.chunks[0].request, a);
  EXPECT_EQ(p2.chunks[0].num_tokens, 36);
  EXPECT_TRUE(p2.chunks[0].sample);
  EXPECT_EQ(p2.chunks[1].request, b);
  EXPECT_EQ(p2.chunks[1].num_tokens, 28);
  EXPECT_EQ(p2.num_tokens(), 64);
  StepPlan p3 = h.step();  // a's decode first, then the rest of b
  ASSERT_EQ(p3.chunks.size(), 2u);
  EXPECT_EQ(p3.chunks[0].request, a);
  EXPECT_EQ(p3.chunks[0].num_tokens, 1);
  EXPECT_EQ(p3.chunks[1].num_tokens, 22);
}

// The defining properties over random traces: no plan exceeds τ, and every request
// that was decoding when schedule() began is in the plan or was preempted by it.
void check_budget_and_decodes(PreemptionMode mode, uint32_t seed) {
  const int32_t budget = 64;
  SchedulerHarness h(sarathi_config(budget, mode), KvConfig{8, 40, 64, 0});
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  int added = 0;
  while ((added < 60 || h.requests.size() > 0) && h.steps < 20000) {
    if (added < 60 && uniform(0, 2) == 0) {
      h.add(uniform(1, 150), uniform(1, 40));
      ++added;
    }
    std::set<RequestId> decoding;
    for (const auto& e : h.scheduler->queues().running)
      if (e.request->num_tokens() - e.request->num_computed_tokens == 1) decoding.insert(e.request->id);
    h.step([&](const StepPlan& p) {
      EXPECT_LE(p.num_tokens(), budget);
      std::set<RequestId> covered;
      for (const auto& c : p.chunks) covered.insert(c.request);
      for (const auto& pr : p.preemptions) covered.insert(pr.request);
      for (RequestId id : decoding) EXPECT_TRUE(covered.count(id)) << "decode of request " << id << " left out";
    });
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(h.requests.size(), 0u);
  EXPECT_EQ(h.finished, 60);
  EXPECT_EQ(h.kv.usage().device.free, 40);
}

TEST(SarathiPolicy, NeverExceedsBudgetNorSkipsADecode) {
  for (uint32_t seed = 1; seed <= 10; ++seed) {
    SCOPED_TRACE(seed);
    check_budget_and_decodes(PreemptionMode::Recompute, seed);
    check_budget_and_decodes(PreemptionMode::Swap, seed);
  }
}

TEST(SarathiPolicy, RunningRequestsNeverOutnumberTheBudget) {
  SchedulerHarness h(sarathi_config(4), KvConfig{4, 256, 0, 0});
  for (int i = 0; i < 10; ++i) h.add(2, 20);
  for (int i = 0; i < 30; ++i) {
    StepPlan p = h.step();
    EXPECT_LE(p.num_tokens(), 4);
    EXPECT_LE(h.scheduler->num_running(), 4u);
  }
}

TEST(SarathiBudget, DerivedFromSloAndRoundedToTile) {
  SchedulerConfig c = sarathi_config(0);
  c.tbt_slo_s = 0.1;
  c.iteration_time = [](int32_t tokens) { return 0.01 + 1e-4 * tokens; };  // <= 900 tokens meet the SLO
  c.tile = 64;
  EXPECT_EQ(resolve_token_budget(c), 896);
  c.tile = 256;
  EXPECT_EQ(resolve_token_budget(c), 768);
  c.tbt_slo_s = 0.005;  // unattainable: one tile
  EXPECT_EQ(resolve_token_budget(c), 256);
  c.token_budget = 300;  // explicit wins
  EXPECT_EQ(resolve_token_budget(c), 300);
  SchedulerConfig d = sarathi_config(0);
  EXPECT_EQ(resolve_token_budget(d), d.default_token_budget);
  d.tbt_slo_s = 0.05;  // an SLO without a profile cannot be honoured
  EXPECT_THROW(resolve_token_budget(d), Error);
}

TEST(SarathiBudget, FromAMeasuredProfile) {
  IterationProfile prof({{128, 0.02}, {512, 0.05}, {1024, 0.09}});
  EXPECT_DOUBLE_EQ(prof(128), 0.02);
  EXPECT_NEAR(prof(320), 0.035, 1e-12);
  EXPECT_NEAR(prof(2048), 0.17, 1e-12);  // extrapolated
  SchedulerConfig c = sarathi_config(0);
  c.tbt_slo_s = 0.07;
  c.iteration_time = prof;
  EXPECT_EQ(resolve_token_budget(c), 768);  // 0.05 + 256 * 0.04 / 512 = 0.07
  EXPECT_THROW(IterationProfile({{0, 1.0}}), Error);
  EXPECT_THROW(IterationProfile({{8, 1.0}, {8, 2.0}}), Error);
}

// Stall-free FCFS: a swapped request that cannot resume yet keeps a new request
// that would fit from being admitted ahead of it.
TEST(SarathiPolicy, ASwappedRequestThatCannotResumeKeepsNewRequestsWaiting) {
  SchedulerHarness h(sarathi_config(64, PreemptionMode::Swap), KvConfig{4, 10, 20, 0});
  const RequestId a = h.add(8, 30).id;  // 38 tokens: the whole pool at the end
  const RequestId b = h.add(8, 30).id;
  while (h.requests.get(b).state != RequestState::Swapped && h.steps < 100) h.step();
  ASSERT_EQ(h.requests.get(b).state, RequestState::Swapped);
  ASSERT_GE(h.kv.usage().available(), 1) << "the new request would fit";
  const RequestId c = h.add(2, 1).id;
  bool c_ran = false;
  while (!c_ran && h.steps < 200) {
    h.step([&](const StepPlan& plan) {
      bool b_runs = false;
      for (const ScheduledChunk& ch : plan.chunks) {
        b_runs |= ch.request == b;
        c_ran |= ch.request == c;
      }
      if (c_ran) {
        EXPECT_TRUE(b_runs) << "c was admitted ahead of the swapped b, step " << h.steps;
      }
    });
  }
  EXPECT_TRUE(c_ran);
  EXPECT_EQ(h.requests.find(a), nullptr) << "b could resume only after a finished";
  h.run();
}

}  // namespace
}  // namespace seer
