// Policy `seer` (docs/seer-policy.md): which parts it composes, and its defining
// behaviours in the scheduler: exact reservations by prediction (none without one),
// the supervisor's doubling, and offload-free (held) preemption in the stall-free
// former.
#include <gtest/gtest.h>

#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/stall_free_former.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig seer_config(int32_t budget = 64) {
  SchedulerConfig c;
  c.policy = "seer";
  c.token_budget = budget;
  c.padding = 0;
  return c;
}

Request& add_predicted(SchedulerHarness& h, int32_t prompt, int32_t predicted, int32_t output, int32_t max_tokens) {
  Request& r = h.add(prompt, output, max_tokens);
  r.predicted_output_len = predicted;
  return r;
}

TEST(SeerPolicy, ComposesTheSeedsParts) {
  auto s = make_scheduler(seer_config(96));
  auto* composed = dynamic_cast<ComposedScheduler*>(s.get());
  ASSERT_NE(composed, nullptr);
  const SchedulerParts& p = composed->parts();
  EXPECT_EQ(p.former->name(), "stall-free");  // Sarathi-Serve
  EXPECT_EQ(dynamic_cast<const StallFreeFormer&>(*p.former).token_budget(), 96);
  EXPECT_EQ(p.allocation->name(), "exact");   // S3
  ASSERT_NE(p.supervisor, nullptr);
  EXPECT_EQ(p.supervisor->name(), "doubling");
  ASSERT_NE(p.victim, nullptr);
  EXPECT_EQ(p.victim->name(), "requester");
  EXPECT_EQ(p.limits.preemption, PreemptionMode::Held);  // EcoServe
  const PolicyInfo& info = policy_info("seer");  // Pensieve: the owner builds the cache
  EXPECT_TRUE(info.caches_conversations);
  EXPECT_TRUE(info.cache_host_tier);
  EXPECT_TRUE(info.uses_token_budget);
  EXPECT_FALSE(info.needs_predictor);  // runs without a predictor too
}

TEST(SeerPolicy, ReservesByPredictionAndNothingWithoutOne) {
  auto s = make_scheduler(seer_config());
  const auto& alloc = *dynamic_cast<ComposedScheduler&>(*s).parts().allocation;
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.sampling.max_tokens = 100;
  EXPECT_EQ(alloc.reservation_tokens(r), 0);  // block-allocation: on demand
  r.predicted_output_len = 20;
  EXPECT_EQ(alloc.reservation_tokens(r), 30);
}

TEST(SeerPolicy, UnderPredictedRequestIsHeldKeepingItsKvAndResumes) {
  // 8 blocks of 4 tokens. a is predicted 4 tokens but makes 20; b (predicted
  // right) takes the rest of the memory, so a's doubled reservation does not fit
  // and a pauses offload-free (held): its K/V stay, nothing is recomputed.
  SchedulerHarness h(seer_config(), KvConfig{4, 8, 0, 0});
  RequestId a = add_predicted(h, 4, 4, 12, 40).id;
  RequestId b = add_predicted(h, 4, 12, 12, 40).id;
  bool held = false;
  while (h.requests.size() > 0 && h.steps < 200) {
    h.step([&](const StepPlan& p) {
      for (const auto& pre : p.preemptions) {
        EXPECT_EQ(pre.mode, PreemptionMode::Held);
        EXPECT_EQ(pre.lost_tokens, 0);
        held |= pre.request == a;
      }
    });
    if (const Request* r = h.requests.find(a); r && r->state == RequestState::Held) {
      EXPECT_GT(r->num_computed_tokens, 0);
      EXPECT_TRUE(h.kv.resident(a, r->num_computed_tokens));  // its K/V stayed on the device
    }
  }
  EXPECT_EQ(h.requests.size(), 0u);
  EXPECT_TRUE(held);
  EXPECT_EQ(h.finished, 2);
  (void)b;
}

TEST(SeerPolicy, HeldRequestsThatBlockEveryoneRecomputeInsteadOfStalling) {
  // Tight memory, many mispredicted requests: the run still finishes (held KV that
  // nothing running frees gives way) with the invariants audited every step.
  SchedulerHarness h(seer_config(32), KvConfig{4, 12, 0, 0});
  for (int i = 0; i < 8; ++i) add_predicted(h, 6, 2, 14 + i, 40);
  h.run(5000);
  EXPECT_EQ(h.finished, 8);
}

}  // namespace
}  // namespace seer
