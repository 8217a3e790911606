// EcoServe's paper behaviours behind flags (docs/ecoserve.md, "Where the design is
// not as the paper states it"): admission when KV frees up (--eco-admission
// on-free), the group's slack before a held preemption (--eco-overrun
// group-slack), the order deadline -> occupied KV -> length (--eco-order kv-first)
// and nesting-doll loans in the same call (--eco-pipelining paper).
#include <gtest/gtest.h>

#include "kv/kv_loans.h"
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/eco_former.h"
#include "scheduler/parts/eco_ordering.h"
#include "scheduler/parts/gt_cohorts.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig eco_config(const std::string& policy) {
  SchedulerConfig c;
  c.policy = policy;
  c.token_budget = 256;
  c.padding = 0;
  c.pt_reserve = 0;
  return c;
}

Request& add_predicted(SchedulerHarness& h, int32_t prompt, int32_t output, int32_t predicted, int32_t max_tokens = -1) {
  Request& r = h.add(prompt, output, max_tokens);
  r.predicted_output_len = predicted;
  return r;
}

const EcoFormer& former_of(const SchedulerHarness& h) {
  return dynamic_cast<const EcoFormer&>(*dynamic_cast<const ComposedScheduler&>(*h.scheduler).parts().former);
}

TEST(EcoPaperFlags, SelectTheSettingsAndDefaultToSeers) {
  SchedulerConfig c = eco_config("ecoserve");
  {
    SchedulerHarness h(c, KvConfig{4, 40, 0, 0});
    const EcoServeSettings& s = former_of(h).settings();
    EXPECT_FALSE(s.admit_on_free);
    EXPECT_FALSE(s.group_slack);
    EXPECT_EQ(s.order, HeldOrder::LengthFirst);
  }
  c.eco_admission = "on-free";
  c.eco_overrun = "group-slack";
  c.eco_order = "kv-first";
  SchedulerHarness h(c, KvConfig{4, 40, 0, 0});
  const EcoServeSettings& s = former_of(h).settings();
  EXPECT_TRUE(s.admit_on_free);
  EXPECT_TRUE(s.group_slack);
  EXPECT_EQ(s.order, HeldOrder::KvFirst);
  EXPECT_EQ(former_of(h).groups().order(), HeldOrder::KvFirst);
}

// A GT that becomes ready while another GT runs and no KV was freed waits for the
// running one to complete (on-free); at every call it starts at once.
TEST(EcoAdmission, OnFreeAdmitsANewGroupOnlyWhenKvFreesUp) {
  for (const char* admission : {"every-call", "on-free"}) {
    SCOPED_TRACE(admission);
    SchedulerConfig c = eco_config("ecoserve-sdo");
    c.eco_admission = admission;
    SchedulerHarness h(c, KvConfig{4, 40, 0, 0});
    const RequestId a = add_predicted(h, 8, 40, 40).id;
    for (int i = 0; i < 3; ++i) h.step();
    ASSERT_EQ(h.requests.get(a).state, RequestState::Running);
    const RequestId b = add_predicted(h, 8, 4, 4).id;
    h.step();  // b's prefill
    h.step();  // b is a GT: held, or admitted at once
    const bool on_free = std::string(admission) == "on-free";
    EXPECT_EQ(h.requests.get(b).state, on_free ? RequestState::Held : RequestState::Running);
    // With on-free it waits, holding its prompt's KV, while a runs within its promise.
    while (on_free && h.requests.find(a)) {
      EXPECT_EQ(h.requests.get(b).state, RequestState::Held);
      h.step();
    }
    h.run();
    EXPECT_EQ(h.requests.size(), 0u);
    EXPECT_EQ(h.kv.usage().device.free, 40);
  }
}

// Without a running GT no group can complete: on-free admits at once then.
TEST(EcoAdmission, OnFreeAdmitsWhenNoGenerationTaskRuns) {
  SchedulerConfig c = eco_config("ecoserve");
  c.eco_admission = "on-free";
  SchedulerHarness h(c, KvConfig{4, 40, 0, 0});
  const RequestId a = add_predicted(h, 8, 10, 10).id;
  h.step();
  h.step();
  EXPECT_EQ(h.requests.get(a).state, RequestState::Running);
  EXPECT_EQ(former_of(h).cohorts().num_running(), 1u);
  h.run();
  EXPECT_EQ(former_of(h).cohorts().num_running(), 0u);
}

// Moving slack keeps the pool's promised total; a donor keeps the blocks for its
// tokens and its unpadded predicted remaining output.
TEST(EcoGroupSlack, TakeSlackMovesPromiseOnlyAndLeavesDonorsTheirPrediction) {
  KvManager kv(KvConfig{4, 40, 0, 0});
  Request r, d;
  r.id = 1, d.id = 2;
  for (Request* x : {&r, &d}) {
    x->prompt_tokens.assign(8, 1);
    x->sampling.max_tokens = 40;
    x->predicted_output_len = 20;
  }
  d.output_tokens.assign(2, 1);  // 10 tokens, 18 to go: needs 7 blocks
  ASSERT_TRUE(kv.reserve(2, 10));
  ASSERT_TRUE(kv.allocate(2, 10));
  ASSERT_TRUE(kv.reserve(1, 5));
  ASSERT_TRUE(kv.allocate(1, 20));
  const int32_t available = kv.usage().available();
  EXPECT_EQ(GtCohorts::slack_blocks(kv, d), 3);
  EXPECT_EQ(GtCohorts::take_slack(kv, r, 5, {&d}), 3);
  EXPECT_EQ(kv.table(1).reserved, 8);
  EXPECT_EQ(kv.table(2).reserved, 7);
  EXPECT_EQ(r.reserved_tokens, 32);
  EXPECT_EQ(kv.usage().available(), available);
  EXPECT_EQ(GtCohorts::slack_blocks(kv, d), 0);
  EXPECT_EQ(GtCohorts::take_slack(kv, r, 1, {&d}), 0);
  kv.check_invariants();
}

// Two GTs admitted together; one was predicted 20 tokens short. With the group's
// slack (the other's 50 % padding, 5 blocks past its 40 predicted tokens) it
// finishes without giving way; without, it is held preempted when it reaches its
// reservation. The exact one finishes unpreempted either way.
TEST(EcoGroupSlack, AnUnderPredictedGtUsesItsGroupsPaddingBeforeGivingWay) {
  for (const char* overrun : {"hold", "group-slack"}) {
    SCOPED_TRACE(overrun);
    SchedulerConfig c = eco_config("ecoserve-sdo");
    c.padding = 0.5;
    c.pt_reserve = 0.05;  // both prompts prefill in one call: one admission group
    c.eco_overrun = overrun;
    SchedulerHarness h(c, KvConfig{4, 200, 0, 0});
    const RequestId a = add_predicted(h, 8, 40, 20, 40).id;
    const RequestId b = add_predicted(h, 8, 40, 40, 80).id;  // same length bucket: one group
    int held_a = 0, held_b = 0;
    while (h.requests.size() > 0 && h.steps < 500) {
      StepPlan plan = h.step();
      for (const Preemption& p : plan.preemptions) {
        held_a += p.request == a;
        held_b += p.request == b;
      }
      // The donor never gives away what its own prediction needs.
      if (const Request* rb = h.requests.find(b); rb && rb->state == RequestState::Running && rb->scheduling.generation_task) {
        EXPECT_GE(h.kv.table(b).reserved, h.kv.config().blocks_for(rb->num_tokens() + GtGroups::remaining(*rb)));
      }
    }
    EXPECT_EQ(h.requests.size(), 0u);
    EXPECT_EQ(held_b, 0);
    if (std::string(overrun) == "group-slack") {
      EXPECT_EQ(held_a, 0);
      EXPECT_GT(former_of(h).slack_uses(), 0);
    } else {
      EXPECT_GT(held_a, 0);
      EXPECT_EQ(former_of(h).slack_uses(), 0);
    }
    EXPECT_EQ(h.kv.usage().device.free, 200);
  }
}

// kv-first (the paper's): within a deadline class more occupied KV goes first, then
// longer predicted remaining length; length-first the other way round.
TEST(EcoOrder, KvFirstOrdersByOccupiedKvBeforeLength) {
  Request held_more_kv, longer;
  held_more_kv.id = 1, longer.id = 2;
  for (Request* r : {&held_more_kv, &longer}) r->sampling.max_tokens = 1000;
  held_more_kv.num_computed_tokens = 600;
  held_more_kv.predicted_output_len = 100;
  longer.num_computed_tokens = 100;
  longer.predicted_output_len = 500;
  GtGroups length_first(GroupMode::Ordered), kv_first(GroupMode::Ordered, DeadlineClass::Relative, HeldOrder::KvFirst);
  EXPECT_LT(length_first.join(longer, 0), length_first.join(held_more_kv, 0));
  const QueueKey kk = kv_first.join(held_more_kv, 0), kl = kv_first.join(longer, 0);
  EXPECT_LT(kk, kl);
  EXPECT_EQ(key_length_bucket(kk, HeldOrder::KvFirst), 1);
  EXPECT_EQ(key_length_bucket(kl, HeldOrder::KvFirst), 4);
  EXPECT_FALSE(kv_first.same_group(kk, kl));
}

TEST(EcoOrder, BestFitKvFirstTakesTheFirstFittingTaskInQueueOrder) {
  RequestQueue q;
  // (class, -occupied, -length) keys.
  const std::array<double, 3> keys[] = {{0, -5, -4}, {0, -5, -1}, {0, -2, -3}, {0, -2, -1}, {1, -1, -1}};
  std::vector<Request> rs(5);
  for (int i = 0; i < 5; ++i) {
    rs[i].id = i;
    q.insert(rs[i], QueueKey{keys[i], i});
  }
  EXPECT_EQ(best_fit_kv_first(q, q.begin(), 2)->request->id, 1);
  EXPECT_EQ(best_fit_kv_first(q, q.begin(), 4)->request->id, 0);
  EXPECT_EQ(best_fit_kv_first(q, q.begin(), 0), q.end());  // nothing in class 0 that short
  EXPECT_EQ(best_fit_kv_first(q, q.find(2), 3)->request->id, 2);
  EXPECT_EQ(best_fit_kv_first(q, q.find(3), 3)->request->id, 3);
  EXPECT_EQ(next_subclass(q, q.begin())->request->id, 2);
  EXPECT_EQ(best_fit_kv_first(q, q.find(4), 1)->request->id, 4);
}

// Nesting dolls: the host lends G1 (almost) all it can; G2 fits only in G1's
// second half. The paper's pipelining lends it in the same call, capped from the
// next call on.
TEST(EcoPipeliningPaper, LoansNestInTheSameCall) {
  for (const char* mode : {"capped", "paper"}) {
    SCOPED_TRACE(mode);
    SchedulerConfig c = eco_config("ecoserve");
    c.pipeline_buffer = 0;
    c.pt_reserve = 0.05;  // both prompts prefill in one call, so both GTs wait together
    c.eco_pipelining = mode;
    SchedulerHarness h(c, KvConfig{16, 80, 64, 0});
    const RequestId host = add_predicted(h, 8, 1200, 1200).id;  // 76 of the 80 blocks
    for (int i = 0; i < 3; ++i) h.step();
    ASSERT_EQ(h.requests.get(host).state, RequestState::Running);
    const RequestId g1 = add_predicted(h, 8, 580, 580).id;
    const RequestId g2 = add_predicted(h, 8, 100, 100).id;
    for (int i = 0; i < 5 && !former_of(h).loans()->loan_of(g1); ++i) h.step();
    const KvLoans::Loan* l1 = former_of(h).loans()->loan_of(g1);
    ASSERT_NE(l1, nullptr);
    EXPECT_EQ(l1->host, host);
    const KvLoans::Loan* l2 = former_of(h).loans()->loan_of(g2);
    if (std::string(mode) == "paper") {
      ASSERT_NE(l2, nullptr);
      EXPECT_EQ(l2->host, g1);
    } else {
      EXPECT_EQ(l2, nullptr);
      EXPECT_EQ(h.requests.get(g2).state, RequestState::Held);
      h.step();
      l2 = former_of(h).loans()->loan_of(g2);
      ASSERT_NE(l2, nullptr);
      EXPECT_EQ(l2->host, g1);
    }
    h.run(5000);
    EXPECT_EQ(h.requests.size(), 0u);
    EXPECT_EQ(former_of(h).loans()->size(), 0u);
    EXPECT_EQ(h.kv.usage().device.free, 80);
  }
}

// Nesting dolls in the loan book: a borrower that lent on and leaves passes its
// borrowers up to its own host, which gets only the rest back now and the nested
// blocks when the innermost borrower finishes.
TEST(KvLoansNesting, ALeavingBorrowerPassesItsBorrowersToItsHost) {
  KvManager kv(KvConfig{4, 40, 0, 0});
  ASSERT_TRUE(kv.reserve(1, 20));
  ASSERT_TRUE(kv.allocate(1, 8));   // host: 2 blocks written, 18 promised unused
  ASSERT_TRUE(kv.allocate(2, 4));   // g1
  ASSERT_TRUE(kv.allocate(3, 4));   // g2
  KvLoans loans;
  ASSERT_TRUE(loans.lend(kv, 1, 2, 10));
  ASSERT_TRUE(loans.lend(kv, 2, 3, 4));  // g1 lends on what it borrowed
  loans.check_invariants(kv);
  EXPECT_EQ(kv.table(2).reserved, 7);  // 1 + 10 - 4: less than it borrowed, the rest lent on
  const int32_t available = kv.usage().available();
  // g1 finishes: g2 now borrows from the host, which gets 10 - 4 back.
  loans.on_remove(2);
  kv.free(2);
  loans.settle_returned(kv, [](RequestId) { return true; });
  ASSERT_NE(loans.loan_of(3), nullptr);
  EXPECT_EQ(loans.loan_of(3)->host, 1);
  EXPECT_EQ(loans.loan_of(3)->blocks, 4);
  EXPECT_EQ(kv.table(1).reserved, 10 + 6);
  EXPECT_EQ(kv.usage().available(), available + 1);  // g1's own block
  loans.check_invariants(kv);
  // g2 is recalled: the host is whole again.
  kv.free(3);
  loans.recall(kv, 3, true);
  EXPECT_EQ(kv.table(1).reserved, 20);
  EXPECT_EQ(loans.size(), 0u);
  loans.check_invariants(kv);
  kv.check_invariants();
}

}  // namespace
}  // namespace seer
