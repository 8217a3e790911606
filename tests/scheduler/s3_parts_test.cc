// The parts of policy `s3` [S3]: first-fit-decreasing packing, the supervisor
// (reservation growth vs preemption) and the victim policy.
#include <gtest/gtest.h>

#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/supervisor.h"
#include "scheduler/parts/victim_policy.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig s3_config(int32_t batch = 16) {
  SchedulerConfig c;
  c.policy = "s3";
  c.max_batch_size = batch;
  c.padding = 0;  // reservations are prompt + prediction exactly
  return c;
}

Request& add_predicted(SchedulerHarness& h, int32_t prompt, int32_t predicted, int32_t output, int32_t max_tokens = 60) {
  Request& r = h.add(prompt, output, max_tokens);
  r.predicted_output_len = predicted;
  return r;
}

std::vector<RequestId> chunk_requests(const StepPlan& p) {
  std::vector<RequestId> ids;
  for (const auto& c : p.chunks) ids.push_back(c.request);
  return ids;
}

TEST(FirstFitDecreasing, AdmitsByNeedDecreasingAndAMisfitDoesNotStopTheScan) {
  SchedulerHarness h(s3_config(), KvConfig{4, 10, 0, 0});
  RequestId d = add_predicted(h, 2, 2, 3).id;    // 4 tokens: 1 block
  RequestId b = add_predicted(h, 4, 16, 3).id;   // 20 tokens: 5 blocks
  RequestId a = add_predicted(h, 4, 20, 3).id;   // 24 tokens: 6 blocks
  RequestId c = add_predicted(h, 4, 8, 3).id;    // 12 tokens: 3 blocks
  StepPlan p = h.step();
  // a (6) fits, b (5) does not fit the 4 left but the scan goes on: c (3), d (1).
  EXPECT_EQ(chunk_requests(p), (std::vector<RequestId>{a, c, d}));
  EXPECT_EQ(h.kv.usage().available(), 0);
  EXPECT_TRUE(h.scheduler->queues().waiting.contains(b));
  h.run();
  EXPECT_EQ(h.preemptions, 0);
}

TEST(FirstFitDecreasing, AdmitsWheneverMemoryFrees) {
  SchedulerHarness h(s3_config(), KvConfig{4, 6, 0, 0});
  RequestId a = add_predicted(h, 4, 8, 2).id;   // 3 blocks, finishes after 2 tokens
  RequestId b = add_predicted(h, 4, 8, 6).id;   // 3 blocks
  RequestId c = add_predicted(h, 4, 4, 2).id;   // 2 blocks: waits for a
  EXPECT_EQ(chunk_requests(h.step()), (std::vector<RequestId>{a, b}));
  h.step();  // a's last token: a finishes
  StepPlan p = h.step();
  EXPECT_EQ(chunk_requests(p), (std::vector<RequestId>{b, c}));  // b's decode, c joins at once
  h.run();
}

TEST(Supervisor, DoublesTheOutputReservationWhenMemoryAllows) {
  SchedulerHarness h(s3_config(), KvConfig{4, 32, 0, 0});
  Request& a = add_predicted(h, 4, 4, 14);  // reserves 8 tokens; needs 18
  RequestId id = a.id;
  int growths = 0;
  while (h.requests.find(id)) {
    Request& r = h.requests.get(id);
    int32_t before = r.reserved_tokens;
    h.step([&](const StepPlan& p) { growths += p.reservation_growths; });
    if (!h.requests.find(id)) break;
    EXPECT_GE(r.reserved_tokens, before);
    EXPECT_LE(r.num_computed_tokens, r.reserved_tokens);
    if (growths == 1) {
      EXPECT_EQ(r.reserved_tokens, 4 + 8);
    } else if (growths == 2) {
      EXPECT_EQ(r.reserved_tokens, 4 + 16);
    }
  }
  EXPECT_EQ(growths, 2);
  EXPECT_EQ(h.preemptions, 0);
}

TEST(Supervisor, DoubledReservationIsCappedAtPromptPlusMaxTokens) {
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.sampling.max_tokens = 25;
  r.reserved_tokens = 10 + 8;
  EXPECT_EQ(DoublingSupervisor::doubled_reservation(r, 19), 10 + 16);
  EXPECT_EQ(DoublingSupervisor::doubled_reservation(r, 30), 10 + 25);  // 32 is past the cap
  r.reserved_tokens = 10;  // nothing reserved for output yet
  EXPECT_EQ(DoublingSupervisor::doubled_reservation(r, 11), 10 + 2);
}

// a (2 blocks, predicted 4 of its 12 tokens) and then b (3 blocks) fill 5 blocks.
// a outgrows its reservation with nothing free.
struct Mispredicted {
  SchedulerHarness h;
  RequestId a, b;
  explicit Mispredicted(const SchedulerConfig& c, int32_t host_blocks = 0)
      : h(c, KvConfig{4, 5, host_blocks, 0}) {
    a = add_predicted(h, 4, 4, 12, 20).id;
    b = add_predicted(h, 4, 8, 12, 20).id;
  }
  // Steps until a preemption happens; returns it.
  Preemption step_until_preemption() {
    for (int i = 0; i < 20; ++i) {
      StepPlan p = h.step();
      if (!p.preemptions.empty()) return p.preemptions.front();
    }
    ADD_FAILURE() << "no preemption";
    return {};
  }
};

TEST(Supervisor, PreemptsTheMispredictedRequestAndRequeuesItWithTheDoubledReservation) {
  Mispredicted m(s3_config());
  Preemption p = m.step_until_preemption();
  EXPECT_EQ(p.request, m.a);  // the request that outgrew, not the latest arrival b
  EXPECT_TRUE(p.outgrew_reservation);
  EXPECT_EQ(p.mode, PreemptionMode::Recompute);  // no host tier
  const Request& a = m.h.requests.get(m.a);
  EXPECT_EQ(a.state, RequestState::Waiting);
  EXPECT_EQ(a.num_output(), 5);  // generated tokens are kept
  EXPECT_EQ(a.scheduling.min_reservation_tokens, 4 + 8);
  EXPECT_EQ(a.scheduling.supervisor_preemptions, 1);
  EXPECT_EQ(m.h.requests.get(m.b).state, RequestState::Running);
  // Re-admitted once b is done, with the doubled reservation (3 blocks).
  while (m.h.requests.get(m.a).state != RequestState::Running) m.h.step();
  EXPECT_EQ(m.h.requests.get(m.a).reserved_tokens, 12);
  m.h.run();
}

TEST(Supervisor, SwapsTheMispredictedRequestOutWhenThereIsAHostTier) {
  Mispredicted m(s3_config(), /*host_blocks=*/8);
  Preemption p = m.step_until_preemption();
  EXPECT_EQ(p.request, m.a);
  EXPECT_EQ(p.mode, PreemptionMode::Swap);
  EXPECT_EQ(m.h.requests.get(m.a).state, RequestState::Swapped);
  m.h.run();
  EXPECT_EQ(m.h.kv.usage().host.free, 8);
}

TEST(VictimPolicy, WithoutTheSupervisorTheLatestArrivalGivesWay) {
  SchedulerConfig c;
  c.policy = "orca";
  c.allocation = "exact";
  c.padding = 0;
  Mispredicted m(c);
  Preemption p = m.step_until_preemption();
  EXPECT_EQ(p.request, m.b);  // a grows past its reservation block by block; b pays
  EXPECT_FALSE(p.outgrew_reservation);
  m.h.run();
}

TEST(VictimPolicy, PartsChooseAsNamed) {
  RequestQueue running;
  Request x, y;
  x.id = 1;
  y.id = 2;
  running.insert(x, QueueKey{{1, 0, 0}, 1});
  running.insert(y, QueueKey{{2, 0, 0}, 2});
  EXPECT_EQ(&LatestArrivalVictim().choose(running, x), &y);
  EXPECT_EQ(&RequesterVictim().choose(running, x), &x);
  EXPECT_EQ(make_victim_policy("requester")->name(), "requester");
  EXPECT_THROW(make_victim_policy("youngest"), Error);
}

// First fit admits a request whose reservation needs exactly the blocks available.
TEST(FirstFitDecreasing, ARequestNeedingExactlyTheAvailableBlocksIsAdmitted) {
  SchedulerHarness h(s3_config(), KvConfig{4, 10, 0, 0});
  const RequestId r = add_predicted(h, 4, 36, 3, 40).id;  // 4 + 36 = 40 tokens: all 10 blocks
  h.step();
  EXPECT_EQ(h.requests.get(r).state, RequestState::Running);
  EXPECT_EQ(h.kv.table(r).reserved, 10);
  EXPECT_EQ(h.kv.usage().available(), 0);
  h.run();
}

// Doubling stops as soon as prompt + output covers the tokens: landing exactly on
// them is enough, no further doubling.
TEST(Supervisor, DoublingStopsWhenPromptPlusDoubledOutputEqualsTheTokens) {
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.sampling.max_tokens = 40;
  r.reserved_tokens = 10 + 8;
  EXPECT_EQ(DoublingSupervisor::doubled_reservation(r, 10 + 16), 10 + 16);
  EXPECT_EQ(DoublingSupervisor::doubled_reservation(r, 10 + 17), 10 + 32);
}

// A request that outran its prediction is admitted with room for one more token.
TEST(ExactAllocation, AnOutgrownPredictionStillReservesTheNextToken) {
  ExactAllocation rule(0);
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.output_tokens.assign(5, 2);
  r.sampling.max_tokens = 50;
  r.predicted_output_len = 2;
  EXPECT_EQ(rule.admission_tokens(r), 10 + 5 + 1);
}

}  // namespace
}  // namespace seer
