#pragma once
// The working state of one schedule() call and the mechanics every batch former
// shares: scheduling a chunk, admitting a waiting request, resuming a swapped one,
// and making room by preempting the latest-arrived running request.
#include <cstdint>

#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/ordering.h"
#include "scheduler/scheduler.h"

namespace seer {

struct SessionLimits {
  int32_t max_batch_size = 256;  // running requests
  double watermark = 0;          // fraction of device blocks kept available when admitting while others run
  PreemptionMode preemption = PreemptionMode::Recompute;
};

class ScheduleSession {
 public:
  ScheduleSession(SchedulerContext& ctx, SchedulerQueues& queues, const AllocationRule& allocation,
                  const Ordering& ordering, const SessionLimits& limits)
      : ctx_(ctx), q_(queues), allocation_(allocation), ordering_(ordering), limits_(limits) {}

  SchedulerQueues& queues() { return q_; }
  KvManager& kv() { return ctx_.kv; }
  const SessionLimits& limits() const { return limits_; }
  int32_t num_tokens() const { return tokens_; }
  bool plan_empty() const { return live_chunks_ == 0; }
  int32_t num_preemptions() const { return static_cast<int32_t>(plan_.preemptions.size()); }
  int32_t num_running() const { return static_cast<int32_t>(q_.running.size()); }
  bool running_full() const { return static_cast<int32_t>(q_.running.size()) >= limits_.max_batch_size; }

  // Appends tokens [num_computed, num_computed + n) of running request r. Its KV
  // must already cover them (ensure_kv, admit, resume).
  void add_chunk(Request& r, int32_t n);
  // Grows r's KV to cover its first `tokens` tokens, preempting the latest-arrived
  // running requests (removing their chunks from this plan) while blocks are short.
  // Returns false when r itself had to be preempted.
  bool ensure_kv(Request& r, int32_t tokens);
  // Largest n <= want such that r's KV can cover num_computed + n tokens without
  // preempting anyone (0 when not even one token fits).
  int32_t tokens_that_fit(const Request& r, int32_t want) const;
  // Admits the waiting request r with its first chunk of n tokens if its
  // reservation and the chunk fit (keeping the watermark while others run): r moves
  // to running and the chunk is added. Returns false, changing nothing, otherwise.
  bool admit(Request& r, int32_t n);
  // Swaps the swapped request r back in and adds its next chunk of n tokens if its
  // blocks, reservation and chunk fit. Returns false, changing nothing, otherwise.
  bool resume(Request& r, int32_t n);
  // Preempts running request r (see parts/preemption.h) and moves it to the queue
  // its new state names.
  void preempt(Request& r);
  // The same with an explicit mode; r may also be a held request (in a named queue).
  void preempt(Request& r, PreemptionMode mode);
  // Offload-free preemption [EcoServe]: running request r pauses keeping its device
  // KV and joins `held` (a named queue of held requests) under `key`; falls back to
  // recompute (waiting queue) when nothing was computed. With preempted = false it
  // is a pause the policy planned (a prompt task that became a generation task
  // waits for its group): not counted as a preemption.
  void hold(Request& r, RequestQueue& held, const QueueKey& key, bool preempted = true);
  // Held request r (in `held`) runs again: its reservation becomes `reserve_blocks`
  // (at least the blocks it holds) and its next chunk of n tokens is added. Returns
  // false, changing nothing, when that needs more than `available` blocks beyond
  // the blocks it holds or is already promised.
  bool unhold(Request& r, RequestQueue& held, int32_t reserve_blocks, int32_t n, int32_t available);
  SchedulerContext& context() { return ctx_; }
  // Asks the conversation cache (if any) to free the device blocks r lacks to
  // cover its first `tokens` tokens. True when it freed some.
  bool make_room_for(const Request& r, int32_t tokens);
  ConversationCache* cache() { return ctx_.cache; }

  StepPlan finish();

 private:
  int32_t available_for_admission() const;
  void unschedule(RequestId id);
  void push_chunk(Request& r, int32_t start, int32_t n);
  // Admission of a request whose leading tokens the cache holds (docs/pensieve.md):
  // the cached KV becomes r's, dropped leading tokens are recomputed as a second
  // range of r in this plan, and the new tokens follow.
  bool admit_cached(Request& r, int32_t n, const CacheMatch& m);
  void make_room(int32_t blocks, RequestId keep = 0);

  SchedulerContext& ctx_;
  SchedulerQueues& q_;
  const AllocationRule& allocation_;
  const Ordering& ordering_;
  SessionLimits limits_;
  StepPlan plan_;
  int32_t tokens_ = 0;
  int32_t live_chunks_ = 0;
};

// Decides which requests run in one iteration, using a session's mechanics.
class BatchFormer {
 public:
  virtual ~BatchFormer() = default;
  virtual std::string_view name() const = 0;
  virtual void form(ScheduleSession& s) = 0;
  // Request `id` leaves the scheduler (finished or aborted), before the caller
  // frees its KV: formers with their own state (groups, loans) forget it.
  virtual void on_remove(RequestId id) {}
  // Audits the former's own state against the queues and the KV manager; throws
  // std::logic_error naming the first violation.
  virtual void check_invariants(const SchedulerQueues& queues, const KvManager& kv) const {}
};

}  // namespace seer
