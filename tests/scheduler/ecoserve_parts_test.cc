// EcoServe's parts one at a time: group formation and split, the PT reserve share,
// offload-free (held) preemption, ordering keys and best-fit search, KV loans and
// their recall.
#include <gtest/gtest.h>

#include "kv/kv_loans.h"
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/eco_former.h"
#include "scheduler/parts/eco_ordering.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig eco_config(const std::string& policy, double pt_reserve = 0) {
  SchedulerConfig c;
  c.policy = policy;
  c.token_budget = 256;
  c.padding = 0;
  c.pt_reserve = pt_reserve;
  return c;
}

Request& add_predicted(SchedulerHarness& h, int32_t prompt, int32_t output, int32_t predicted, int32_t max_tokens = -1) {
  Request& r = h.add(prompt, output, max_tokens);
  r.predicted_output_len = predicted;
  return r;
}

size_t held_count(const SchedulerHarness& h) {
  const auto* q = h.scheduler->queues().find_named(EcoFormer::kHeldQueue);
  return q ? q->queue.size() : 0;
}

const EcoFormer& former_of(const SchedulerHarness& h) {
  return dynamic_cast<const EcoFormer&>(*dynamic_cast<const ComposedScheduler&>(*h.scheduler).parts().former);
}

// EcoServe pads by 15 % unless a padding is given; any given value, S3's 0.1
// included, is taken as it is.
TEST(EcoServeConfig, PaddingDefaultsToFifteenPercentAndAGivenValueWins) {
  SchedulerConfig c = eco_config("ecoserve");
  for (auto [given, used] : {std::pair<std::optional<double>, double>{std::nullopt, 0.15}, {0.1, 0.1}, {0.0, 0.0}}) {
    c.padding = given;
    SchedulerHarness h(c, KvConfig{4, 40, 0, 0});
    EXPECT_DOUBLE_EQ(former_of(h).settings().padding, used);
  }
}

TEST(EcoGroups, AGroupThatDoesNotFitIsSplit) {
  // Six GTs of one group: 2 prompt blocks + 5 more each; 40 blocks fit five.
  SchedulerHarness h(eco_config("ecoserve-sd"), KvConfig{4, 40, 0, 0});
  for (int i = 0; i < 6; ++i) add_predicted(h, 8, 20, 20);
  h.step();  // six prefills (prompt KV only)
  EXPECT_EQ(h.scheduler->num_running(), 6u);
  EXPECT_EQ(h.kv.usage().device.used(), 12);
  h.step();  // they become GTs: one group, five admitted, one held with its prompt KV
  EXPECT_EQ(h.scheduler->num_running(), 5u);
  EXPECT_EQ(held_count(h), 1u);
  EXPECT_EQ(former_of(h).groups().num_groups(), 1u);
  h.run();
}

TEST(EcoGroups, PtReserveShareIsKeptFromGenerationTasks) {
  // 25 % of 40 blocks stay for prompt tasks: only three GTs of five blocks fit.
  SchedulerHarness h(eco_config("ecoserve-sd", 0.25), KvConfig{4, 40, 0, 0});
  for (int i = 0; i < 6; ++i) add_predicted(h, 8, 20, 20);
  h.step();
  h.step();
  EXPECT_EQ(h.scheduler->num_running(), 3u);
  EXPECT_EQ(held_count(h), 3u);
  h.run();
}

TEST(EcoGroups, GroupsAreKeyedByPredictedRemainingLength) {
  GtGroups g(GroupMode::TimeSynced);
  Request a, b, c;
  a.id = 1, b.id = 2, c.id = 3;
  for (Request* r : {&a, &b, &c}) r->sampling.max_tokens = 1000;
  a.predicted_output_len = 100;
  b.predicted_output_len = 120;  // same 128-token bucket as a
  c.predicted_output_len = 400;
  QueueKey ka = g.join(a, 0), kb = g.join(b, 5), kc = g.join(c, 6);
  EXPECT_TRUE(g.same_group(ka, kb));
  EXPECT_FALSE(g.same_group(ka, kc));
  EXPECT_LT(kb, kc);  // groups in the order they formed
  EXPECT_EQ(g.num_groups(), 2u);
  g.leave(1), g.leave(2), g.leave(3);
  EXPECT_EQ(g.num_groups(), 0u);
}

TEST(EcoHeld, UnderPredictionPausesKeepingDeviceKv) {
  // Two GTs fill the pool; one was predicted far too short.
  SchedulerHarness h(eco_config("ecoserve-d"), KvConfig{4, 16, 0, 0});
  Request& a = add_predicted(h, 8, 40, 4, 48);
  const RequestId id = a.id;
  add_predicted(h, 8, 30, 30, 30);
  bool held = false;
  while (h.requests.size() > 0 && h.steps < 500 && !held) {
    std::vector<int32_t> before = h.kv.table(id).device;
    StepPlan plan = h.step();
    for (const Preemption& p : plan.preemptions) {
      if (p.request != id || p.mode != PreemptionMode::Held) continue;
      held = true;
      EXPECT_TRUE(p.outgrew_reservation);  // through the shared supervisor/victim path
      EXPECT_EQ(p.lost_tokens, 0);
      EXPECT_EQ(p.swapped_blocks, 0);
      // Its K/V did not move (it may have grown after re-admission).
      std::vector<int32_t> after = h.kv.table(id).device;
      ASSERT_LE(before.size(), after.size());
      for (size_t i = 0; i < before.size(); ++i) EXPECT_EQ(before[i], after[i]);
    }
  }
  ASSERT_TRUE(held);
  const Request* r = h.requests.find(id);
  ASSERT_NE(r, nullptr);
  EXPECT_GT(*r->predicted_output_len, 4);  // re-queued with L_new
  h.run();
}

TEST(EcoHeld, PreemptionIsTheSharedSupervisorAndVictimPartsInHeldMode) {
  for (const char* policy : {"ecoserve-d", "ecoserve-sd", "ecoserve-sdo", "ecoserve"}) {
    auto s = make_scheduler(eco_config(policy));
    const SchedulerParts& p = dynamic_cast<const ComposedScheduler&>(*s).parts();
    ASSERT_NE(p.supervisor, nullptr);
    EXPECT_EQ(p.supervisor->name(), "repredict");
    ASSERT_NE(p.victim, nullptr);
    EXPECT_EQ(p.victim->name(), "requester");
    EXPECT_EQ(p.limits.preemption, PreemptionMode::Held);
  }
}

TEST(EcoHeld, RepredictSupervisorSetsTheNewRemainingLengthAndNeverExtends) {
  KvManager kv(KvConfig{4, 16, 0, 0});
  RepredictSupervisor sup(0.5);
  Request r;
  r.prompt_tokens.assign(8, 1);
  r.sampling.max_tokens = 100;
  r.predicted_output_len = 10;
  r.output_tokens.assign(12, 1);  // past its prediction
  EXPECT_FALSE(sup.extend(kv, r, 20));
  EXPECT_EQ(*r.predicted_output_len, 12 + 5);  // at least padding x predicted more
  r.predicted_output_len = 40;
  EXPECT_FALSE(sup.extend(kv, r, 20));
  EXPECT_EQ(*r.predicted_output_len, 40);  // predicted - generated = 28 still to go
  r.predicted_output_len = 96;
  r.output_tokens.assign(98, 1);
  EXPECT_FALSE(sup.extend(kv, r, 20));
  EXPECT_EQ(*r.predicted_output_len, 100);  // capped at max_tokens
}

TEST(EcoOrdering, KeysAreBucketedDeadlineThenLongerFirst) {
  EcoOrdering o;
  Request tight, loose_long, loose_short;
  tight.id = 1, loose_long.id = 2, loose_short.id = 3;
  tight.slo.deadline_s = 0.3;
  tight.prompt_tokens.assign(10, 0);
  loose_long.prompt_tokens.assign(600, 0);
  loose_short.prompt_tokens.assign(100, 0);
  EXPECT_LT(o.key(tight), o.key(loose_long));
  EXPECT_LT(o.key(loose_long), o.key(loose_short));
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 1.5}), 1);
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 5}), 2);
  EXPECT_EQ(length_bucket(128), 1);
  EXPECT_EQ(length_bucket(129), 2);
}

TEST(EcoOrdering, BestFitFindsTheLongestTaskThatFits) {
  EcoOrdering o;
  RequestQueue q;
  std::vector<Request> rs(4);
  const int32_t lens[] = {600, 300, 250, 100};
  for (int i = 0; i < 4; ++i) {
    rs[i].id = i;
    rs[i].prompt_tokens.assign(static_cast<size_t>(lens[i]), 0);
    q.insert(rs[i], o.key(rs[i]));
  }
  auto it = best_fit(q, q.begin(), 2);  // room for 256 tokens
  ASSERT_NE(it, q.end());
  EXPECT_EQ(it->request->id, 2);
  EXPECT_EQ(best_fit(q, q.begin(), 0), q.end());
  EXPECT_EQ(best_fit(q, q.begin(), 10)->request->id, 0);
}

TEST(KvLoans, LendSettleAndRecallMovePromisesOnly) {
  KvManager kv(KvConfig{4, 20, 0, 0});
  ASSERT_TRUE(kv.reserve(1, 10));
  ASSERT_TRUE(kv.allocate(1, 8));
  ASSERT_TRUE(kv.allocate(2, 4));
  const int32_t available = kv.usage().available();
  KvLoans loans;
  EXPECT_FALSE(loans.lend(kv, 1, 2, 9));  // more than the host's unused promise
  ASSERT_TRUE(loans.lend(kv, 1, 2, 4));
  EXPECT_EQ(kv.table(1).reserved, 6);
  EXPECT_EQ(kv.table(2).reserved, 5);  // its own block plus the four lent
  EXPECT_EQ(kv.usage().available(), available);
  EXPECT_EQ(loans.lent_by(1), 4);
  EXPECT_FALSE(loans.lend(kv, 2, 1, 1));  // a cycle
  loans.check_invariants(kv);
  kv.check_invariants();
  // The borrower finishes: its promise goes home at the next settlement.
  loans.on_remove(2);
  kv.free(2);
  loans.settle_returned(kv, [](RequestId) { return true; });
  EXPECT_EQ(kv.table(1).reserved, 10);
  EXPECT_EQ(loans.size(), 0u);
  // Recall: the borrower is preempted (its KV freed) and the host is whole again.
  ASSERT_TRUE(kv.allocate(3, 4));
  ASSERT_TRUE(loans.lend(kv, 1, 3, 5));
  kv.free(3);
  loans.recall(kv, 3, true);
  EXPECT_EQ(kv.table(1).reserved, 10);
  loans.check_invariants(kv);
  kv.check_invariants();
}

TEST(KvLoans, AuditCatchesABorrowerWithoutKv) {
  KvManager kv(KvConfig{4, 20, 0, 0});
  ASSERT_TRUE(kv.reserve(1, 10));
  ASSERT_TRUE(kv.allocate(1, 4));
  ASSERT_TRUE(kv.allocate(2, 4));
  KvLoans loans;
  ASSERT_TRUE(loans.lend(kv, 1, 2, 3));
  kv.free(2);  // freed behind the ledger's back
  EXPECT_THROW(loans.check_invariants(kv), std::logic_error);
}

TEST(EcoPipelining, AShortGtBorrowsFromALongHostAndIsRecalled) {
  SchedulerHarness h(eco_config("ecoserve"), KvConfig{4, 80, 64, 0});
  add_predicted(h, 8, 200, 200);  // the host: 52 blocks
  add_predicted(h, 8, 90, 90);    // 25 blocks
  for (int i = 0; i < 3; ++i) h.step();
  // Only one block is left: this GT fits nowhere but in a host's second half. It
  // runs far past its prediction, so a host eventually needs its blocks back.
  add_predicted(h, 8, 150, 20, 150);
  bool lent = false, recalled = false;
  while (h.requests.size() > 0 && h.steps < 2000) {
    StepPlan plan = h.step();
    lent |= former_of(h).loans()->size() > 0;
    for (const Preemption& p : plan.preemptions) recalled |= p.mode == PreemptionMode::Swap;
  }
  EXPECT_TRUE(lent);
  EXPECT_TRUE(recalled);
  EXPECT_EQ(h.requests.size(), 0u);
  EXPECT_EQ(former_of(h).loans()->size(), 0u);
  EXPECT_EQ(h.kv.usage().device.free, 80);
}

TEST(EcoPipelining, HostsLendToShortGtsBehindALongGroupThatDoesNotFit) {
  SchedulerHarness h(eco_config("ecoserve"), KvConfig{16, 40, 64, 0});
  const RequestId host = add_predicted(h, 8, 600, 600).id;  // 38 of the 40 blocks
  for (int i = 0; i < 3; ++i) h.step();
  ASSERT_EQ(h.requests.get(host).state, RequestState::Running);
  // The long GT heads the held queue (longest first) and fits neither the free KV nor
  // a host's second half (400 >= 600 / 2 - 0.15 x 600); the short one behind it does.
  const RequestId long_gt = add_predicted(h, 8, 400, 400).id;
  const RequestId short_gt = add_predicted(h, 8, 100, 100).id;
  for (int i = 0; i < 10 && !former_of(h).loans()->loan_of(short_gt); ++i) h.step();
  const KvLoans::Loan* loan = former_of(h).loans()->loan_of(short_gt);
  ASSERT_NE(loan, nullptr);
  EXPECT_EQ(loan->host, host);
  EXPECT_EQ(h.requests.get(short_gt).state, RequestState::Running);
  EXPECT_EQ(h.requests.get(long_gt).state, RequestState::Held);
  h.run(3000);
  EXPECT_EQ(h.kv.usage().device.free, 40);
}

// Class 0: a GT that was preempted (it holds its KV) goes ahead of every GT never
// preempted, even one that arrived earlier, in each grouping mode.
TEST(EcoGroups, APreemptedGenerationTaskIsOrderedAheadOfNeverPreemptedOnes) {
  for (GroupMode mode : {GroupMode::Fcfs, GroupMode::TimeSynced, GroupMode::Ordered}) {
    GtGroups g(mode);
    Request fresh, preempted;
    fresh.id = 1, preempted.id = 2;
    fresh.arrival_s = 0, preempted.arrival_s = 10;
    for (Request* r : {&fresh, &preempted}) r->sampling.max_tokens = 100;
    preempted.preemptions = 1;
    const QueueKey kf = g.join(fresh, 0);
    const QueueKey kp = g.join(preempted, 10);
    EXPECT_LT(kp, kf) << "mode " << static_cast<int>(mode);
    EXPECT_FALSE(g.same_group(kp, kf));
    g.leave(1), g.leave(2);
  }
}

// A host keeps the blocks for its tokens plus the rounded-up half of its remaining
// length and lends the rest. Here the host (8 + 200 tokens: 52 blocks of 4) has 9
// outputs: 17 tokens and 191 to go, so it keeps ceil((17 + 96) / 4) = 29 blocks and
// lends 23 (rounding the half down would keep 28 and lend 24, on this block boundary).
// A one-block GT (no buffer, no padding) with L output tokens is missing
// ceil((4 + L) / 4) - 1 blocks: 23 for L = 92, 24 for L = 93.
TEST(EcoPipelining, AHostLendsAllButTheRoundedUpHalfOfItsRemainingLength) {
  auto lent_to = [](int32_t hosted_len) -> int32_t {
    SchedulerConfig c = eco_config("ecoserve");
    c.pipeline_buffer = 0;
    SchedulerHarness h(c, KvConfig{4, 53, 0, 0});
    const RequestId host = add_predicted(h, 8, 200, 200).id;
    while (h.requests.get(host).num_output() < 8) h.step();
    const RequestId gt = add_predicted(h, 4, hosted_len, hosted_len).id;
    h.step();  // the GT's prefill; the host reaches 9 outputs
    EXPECT_EQ(h.requests.get(host).num_output(), 9);
    EXPECT_EQ(h.kv.table(host).reserved, 52);
    h.step();  // the GT is held and only a host's second half can take it
    const KvLoans::Loan* loan = former_of(h).loans()->loan_of(gt);
    const int32_t blocks = loan ? loan->blocks : 0;
    if (loan) {
      EXPECT_EQ(h.kv.table(host).reserved, 52 - blocks);
    }
    h.run(3000);
    return blocks;
  };
  EXPECT_EQ(lent_to(92), 23);
  EXPECT_EQ(lent_to(93), 0);
}

// Deadline buckets include their upper edge: 0.5 s is tight, 2 s medium.
TEST(EcoOrdering, DeadlineBucketsIncludeTheirUpperEdge) {
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 0.5}), 0);
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 0.51}), 1);
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 2.0}), 1);
  EXPECT_EQ(deadline_bucket(Slo{0, 0, 0}), 3);  // no deadline
}

// With --eco-deadline time-left (the paper's), a waiting GT's class is that of the
// time left until its deadline when it joins: a request with a loose deadline that
// has waited long goes ahead of a fresh one with a tighter deadline.
TEST(EcoOrdering, TimeLeftClassesOrderLateRequestsFirst) {
  Request late, fresh;
  late.id = 1, fresh.id = 2;
  late.arrival_s = 0, fresh.arrival_s = 9.5;
  late.slo.deadline_s = 10;   // relative class 2 (> 2 s); 0.4 s left at t = 9.6
  fresh.slo.deadline_s = 1;   // relative class 1; 0.9 s left at t = 9.6
  for (Request* r : {&late, &fresh}) r->sampling.max_tokens = 100;
  EXPECT_EQ(time_left_bucket(late, 9.6), 0);
  EXPECT_EQ(time_left_bucket(fresh, 9.6), 1);
  EXPECT_EQ(time_left_bucket(late, 11), 0);  // past its deadline: the tightest
  Request none;
  EXPECT_EQ(time_left_bucket(none, 5), 3);
  GtGroups relative(GroupMode::Ordered), time_left(GroupMode::Ordered, DeadlineClass::TimeLeft);
  EXPECT_LT(relative.join(fresh, 9.6), relative.join(late, 9.6));
  EXPECT_LT(time_left.join(late, 9.6), time_left.join(fresh, 9.6));
}

// A prompt task reserves its sequence; once only the last prompt token is left to
// run (it samples the first output) it is a generation task and reserves its
// predicted output too.
TEST(EcoAllocation, APromptWithOneTokenLeftReservesItsGeneration) {
  EcoAllocation a(0);
  Request r;
  r.prompt_tokens.assign(8, 1);
  r.sampling.max_tokens = 100;
  r.predicted_output_len = 20;
  r.num_computed_tokens = 6;
  EXPECT_EQ(a.reservation_tokens(r), 8);
  r.num_computed_tokens = 7;
  EXPECT_EQ(a.reservation_tokens(r), 8 + 20);
}

}  // namespace
}  // namespace seer
