#pragma once
// EcoServe's batch former [EcoServe] (docs/ecoserve.md): prompt tasks (PTs) fill
// the *compute* of an iteration, generation tasks (GTs) fill the *KV memory*.
//  1. Running GTs decode within their reservation (prompt + predicted remaining x
//     (1 + padding)). A GT that outgrows it first takes back KV it lent (recall:
//     the borrower is swapped out), else goes through the session's shared
//     supervisor/victim path: the re-predicting supervisor sets L_new remaining
//     tokens and the GT gives way in Held mode (keeping its KV), re-joining the GT
//     queue in the group of L_new, ahead of others (place_held).
//  2. Running PTs continue their prefill; a PT whose prefill is done becomes a GT
//     and joins its group in the GT queue (held: its prompt K/V stay).
//  3. Swapped GTs resume, then held GT groups are admitted while their
//     reservations fit the KV left after the PT reserve (a group that does not fit
//     is split; with ordering, best fit fills what is left). With pipelining each
//     running GT (host), longest first, then lends the unused second half of its
//     reservation to the longest held GTs short enough to finish before it needs it.
//  4. New PTs are admitted (reserving their prompt's KV only) until the token
//     budget (the target forward size) is filled, the last prompt chunked.
// The variants are configurations of parts: D (decoupled queues), SD (+ time-synced
// groups), SDO (+ ordered groups with best-fit search; GroupMode), full (+ the KV
// pipelining part, eco_pipelining.h).
#include <cstdint>
#include <memory>
#include <vector>

#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/eco_pipelining.h"
#include "scheduler/parts/gt_cohorts.h"
#include "scheduler/parts/gt_groups.h"
#include "scheduler/parts/schedule_session.h"

namespace seer {

struct EcoServeSettings {
  // How held GTs are grouped (gt_groups.h): Fcfs (EcoServe-D), TimeSynced (-SD) or
  // Ordered (-SDO and full: bucketed keys, and best fit over them).
  GroupMode groups = GroupMode::Ordered;
  int32_t token_budget = 2048;  // the target forward size (TFS)
  double pt_reserve = 0.03;     // share of device KV kept for prompt tasks
  double padding = 0.15;
  DeadlineClass deadline = DeadlineClass::Relative;  // of the held GTs' order
  HeldOrder order = HeldOrder::LengthFirst;           // within a deadline class
  // The paper's: held groups are admitted only when KV freed up since the last
  // call (a group completed) or no GT runs; otherwise at every call.
  bool admit_on_free = false;
  // The paper's: a GT past its reservation first takes the unused padding of the
  // running members of the group it was admitted with (gt_cohorts.h).
  bool group_slack = false;
};

// The KV a request reserves: a prompt task its whole sequence (prompt, plus the
// output to recompute after a recompute preemption); a generation task its tokens
// plus its predicted remaining output x (1 + padding), at most prompt + max_tokens.
class EcoAllocation final : public AllocationRule {
 public:
  explicit EcoAllocation(double padding) : padding_(padding) {}
  std::string_view name() const override { return "eco"; }
  int32_t reservation_tokens(const Request& r) const override;
  int32_t generation_tokens(const Request& r) const;

 private:
  double padding_;
};

class EcoFormer final : public BatchFormer {
 public:
  // `pipelining`: the KV pipelining part (full EcoServe), nullptr without.
  explicit EcoFormer(const EcoServeSettings& settings, std::unique_ptr<KvPipelining> pipelining = nullptr);
  std::string_view name() const override { return "ecoserve"; }
  int32_t token_budget() const override { return settings_.token_budget; }
  void form(ScheduleSession& s) override;
  void on_remove(RequestId id) override;
  // A GT preempted offload-free joins the group of its (re-predicted) remaining length.
  QueueKey place_held(const Request& r, double now) override;
  void check_invariants(const SchedulerQueues& queues, const KvManager& kv) const override;

  // The loan book of KV pipelining; nullptr without the part.
  const KvLoans* loans() const;
  const GtGroups& groups() const { return groups_; }
  const GtCohorts& cohorts() const { return cohorts_; }
  // Times a GT past its reservation was carried on by its group's slack.
  int64_t slack_uses() const { return slack_uses_; }
  const EcoServeSettings& settings() const { return settings_; }
  static constexpr const char* kHeldQueue = "held";

 private:
  RequestQueue& held(ScheduleSession& s) const;
  int32_t generation_blocks(const KvManager& kv, const Request& r) const;
  int32_t budget_left(const ScheduleSession& s) const { return settings_.token_budget - s.num_tokens(); }
  int32_t gt_room(ScheduleSession& s) const;
  bool fits_best() const { return settings_.groups == GroupMode::Ordered; }

  void run_running(ScheduleSession& s);
  void continue_prefill(ScheduleSession& s, Request& r);
  void run_decode(ScheduleSession& s, Request& r);
  [[nodiscard]] bool recall_loans(ScheduleSession& s, Request& host);
  // The paper's first step on under-prediction: blocks from the unused padding of
  // r's admission group (donors not in a loan); true when r is within again.
  [[nodiscard]] bool take_group_slack(ScheduleSession& s, Request& r);
  // r runs as a GT from now on, in the admission group of `group` this call.
  void started(Request& r, GtGroups::GroupId group);
  // The admission step (held groups, then loans) runs this call.
  bool admission_due(ScheduleSession& s) const;
  void evict(ScheduleSession& s, Request& r, PreemptionMode mode);
  void resume_swapped(ScheduleSession& s);
  void admit_held(ScheduleSession& s);
  [[nodiscard]] bool admit_one(ScheduleSession& s, Request& r, int32_t& room);
  void fill_by_best_fit(ScheduleSession& s, const QueueKey& front, int32_t& room);
  [[nodiscard]] bool admit_best_fit(ScheduleSession& s, RequestQueue::iterator from, int32_t& room);
  // KV pipelining: running GTs lend to held GTs that finish within their lenders'
  // unused second half (step 3 above).
  void lend_kv(ScheduleSession& s);
  void admit_prompts(ScheduleSession& s);
  void ensure_progress(ScheduleSession& s);

  EcoServeSettings settings_;
  EcoAllocation allocation_;
  GtGroups groups_;
  std::unique_ptr<KvPipelining> pipelining_;
  GtCohorts cohorts_;
  int32_t pt_blocks_ = 0;  // KV of running PTs (this schedule() call)
  int64_t slack_uses_ = 0;
  int64_t calls_ = 0;      // schedule() calls so far (admission groups are per call)
  // Free (or cached) blocks when the last call ended: admit_on_free admits when
  // more are free now.
  int32_t free_at_end_ = -1;
};

}  // namespace seer
