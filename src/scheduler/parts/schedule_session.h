#pragma once
// The working state of one schedule() call and the mechanics every batch former
// shares: scheduling a chunk, bringing a waiting or swapped request in (admit,
// resume; the scans over a queue that use them are parts/admission.h), and making
// room when a running request needs KV (the supervisor may grow its reservation;
// the victim policy names who gives way).
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "kv/kv_loans.h"
#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/ordering.h"
#include "scheduler/parts/supervisor.h"
#include "scheduler/parts/victim_policy.h"
#include "scheduler/scheduler.h"

namespace seer {

struct SessionLimits {
  int32_t max_batch_size = 256;  // running requests
  double watermark = 0;          // fraction of device blocks kept available when admitting while others run
  PreemptionMode preemption = PreemptionMode::Recompute;
};

// The default victim policy (latest arrival) for sessions built without one.
const VictimPolicy& default_victim_policy();

class BatchFormer;

class ScheduleSession {
 public:
  // `supervisor` may be null: requests then grow past their reservations from the
  // free pool. `former` (may be null) places requests preempted offload-free in
  // the held queue (BatchFormer::place_held); without one they wait in arrival order.
  ScheduleSession(SchedulerContext& ctx, ConversationCache* cache, SchedulerQueues& queues, const AllocationRule& allocation,
                  const Ordering& ordering, const SessionLimits& limits,
                  const VictimPolicy& victims = default_victim_policy(), const Supervisor* supervisor = nullptr,
                  BatchFormer* former = nullptr)
      : ctx_(ctx),
        cache_(cache),
        q_(queues),
        allocation_(allocation),
        ordering_(ordering),
        limits_(limits),
        victims_(victims),
        supervisor_(supervisor),
        former_(former) {}

  SchedulerQueues& queues() { return q_; }
  // Read-only: the session is the one mutator of the KV manager while a plan forms;
  // formers decide and call the session's operations below.
  const KvManager& kv() const { return ctx_.kv; }
  const SessionLimits& limits() const { return limits_; }
  int32_t num_tokens() const { return tokens_; }
  bool plan_empty() const { return live_chunks_ == 0; }
  int32_t num_preemptions() const { return static_cast<int32_t>(plan_.preemptions.size()); }
  int32_t num_running() const { return static_cast<int32_t>(q_.running.size()); }
  bool running_full() const { return static_cast<int32_t>(q_.running.size()) >= limits_.max_batch_size; }

  // Calls fn(r) for every request running when the call starts, in arrival order,
  // skipping those preempted meanwhile; stops early when fn returns false.
  void for_each_running(const std::function<bool(Request&)>& fn);
  // Appends tokens [num_computed, num_computed + n) of running request r. Its KV
  // must already cover them (ensure_kv, admit, resume).
  void add_chunk(Request& r, int32_t n);
  // add_chunk() for tokens that fit without making room (within r's reservation, or
  // as tokens_that_fit() promised): allocates their blocks first. Throws
  // std::logic_error naming r when they do not fit (the former miscounted).
  void add_chunk_allocating(Request& r, int32_t n);
  // KV pipelining [EcoServe]: the former keeps the loan book and decides; the
  // session moves the blocks (kv/kv_loans.h).
  [[nodiscard]] bool lend(KvLoans& loans, RequestId host, RequestId hosted, int32_t blocks);
  void recall(KvLoans& loans, RequestId hosted, bool host_running);
  void settle_returned(KvLoans& loans, const std::function<bool(RequestId)>& host_running);
  // Grows r's KV to cover its first `tokens` tokens. A request without a
  // reservation whose allocation rule now asks for one (staged: decoding starts)
  // reserves it first. Past its reservation the supervisor (if any) must grow the
  // reservation first. While that or the blocks
  // fail, the victim policy's choice is preempted (its chunks leave this plan).
  // Returns false when r itself had to be preempted.
  [[nodiscard]] bool ensure_kv(Request& r, int32_t tokens);
  // Running request r needs KV for `tokens` past its reservation, and nothing
  // else frees it: the supervisor grows the reservation (true); otherwise the
  // victim policy's choice gives way (preempt(), the session's mode), until the
  // supervisor succeeds or r itself gave way (false). The path S3's doubling and
  // EcoServe's re-predicting supervisor share (docs/architecture.md, "Preemption").
  [[nodiscard]] bool supervise(Request& r, int32_t tokens);
  // Largest n <= want such that r's KV can cover num_computed + n tokens without
  // preempting anyone (0 when not even one token fits).
  int32_t tokens_that_fit(const Request& r, int32_t want) const;
  // The KV (tokens) r reserves when admitted or resumed: the allocation rule's
  // reservation, at least the supervisor's floor, at most prompt + max_tokens.
  int32_t reservation_tokens(const Request& r) const;
  // The KV (tokens) that must be available to admit r: its reservation, or more
  // when the rule stages it (AllocationRule::admission_tokens).
  int32_t admission_tokens(const Request& r) const;
  // Admits the waiting request r with its first chunk of n tokens if its
  // reservation and the chunk fit (keeping the watermark while others run): r moves
  // to running and the chunk is added. Returns false, changing nothing, otherwise.
  [[nodiscard]] bool admit(Request& r, int32_t n);
  // Swaps the swapped request r back in and adds its next chunk of n tokens if its
  // blocks, reservation and chunk fit. Returns false, changing nothing, otherwise.
  [[nodiscard]] bool resume(Request& r, int32_t n);
  // admit() or resume(), by r's state.
  [[nodiscard]] bool bring_in(Request& r, int32_t n);
  // Preempts running request r (see parts/preemption.h) and moves it to the queue
  // its new state names (held: the named queue "held", placed by the former).
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
  // the blocks it holds or is already promised (cached blocks are freed for it when
  // `available` counts them).
  [[nodiscard]] bool unhold(Request& r, RequestQueue& held, int32_t reserve_blocks, int32_t n, int32_t available);
  SchedulerContext& context() { return ctx_; }
  // Asks the conversation cache (if any) to free the device blocks r lacks to
  // cover its first `tokens` tokens. True when it freed some.
  [[nodiscard]] bool make_room_for(const Request& r, int32_t tokens);
  ConversationCache* cache() { return cache_; }
  // Device blocks available now plus those the conversation cache frees on demand
  // (prefix caching: cached blocks count as free, as in vLLM's block pool).
  int32_t free_or_cached_blocks() const;
  // Device blocks admit() can find now: the available pool less the watermark while
  // others run, plus those the conversation cache frees for what it takes in.
  int32_t admission_room() const;

  StepPlan finish();

 private:
  int32_t available_for_admission() const;
  // Device blocks bringing r in with a chunk of n tokens takes from the pool.
  int32_t admission_blocks(const Request& r, int32_t n) const;
  // Reserves, allocates n more tokens, moves r from `from` to running, adds the chunk.
  void take_in(Request& r, RequestQueue& from, int32_t reserve_tokens, int32_t n);
  // Grows r's KV to `tokens` without preempting anyone (staged reservation, then
  // the supervisor first).
  [[nodiscard]] bool grow(Request& r, int32_t tokens);
  // A running request without a reservation whose rule now asks for one (a staged
  // rule when decoding starts) reserves it; false when it does not fit.
  [[nodiscard]] bool top_up_reservation(Request& r);
  // Available blocks top_up_reservation(r) would take (0 when none is due).
  int32_t staged_reservation_blocks(const Request& r) const;
  void unschedule(RequestId id);
  void push_chunk(Request& r, int32_t start, int32_t n);
  // Speculative decoding (docs/speculative.md): once the former is done, each
  // sampled chunk, in plan order, also verifies as many of its request's draft
  // tokens as the budget the former left and the free KV allow; drafts never
  // displace a decode or a prefill chunk (stall-free batching holds).
  void add_drafts();
  // Admission of a request whose leading tokens the cache holds (docs/pensieve.md):
  // the cached KV becomes r's, dropped leading tokens are recomputed as a second
  // range of r in this plan, and the new tokens follow.
  [[nodiscard]] bool admit_cached(Request& r, int32_t n, CacheMatch m);
  // Counts r's admission in the cache's counters, once per request.
  void note_lookup(Request& r, int32_t reused_tokens);
  // Asks the conversation cache to free `blocks` device blocks, never from `keep`.
  void make_room(int32_t blocks, std::optional<KvOwner> keep = std::nullopt);
  // Preempts the victim policy's choice so that r can grow to `tokens`; false when
  // that was r itself.
  [[nodiscard]] bool give_way_for(Request& r, int32_t tokens);

  SchedulerContext& ctx_;
  ConversationCache* cache_;  // null: stateless
  SchedulerQueues& q_;
  const AllocationRule& allocation_;
  const Ordering& ordering_;
  SessionLimits limits_;
  const VictimPolicy& victims_;
  const Supervisor* supervisor_;
  BatchFormer* former_;
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
  // Tokens per iteration the former fills up to (0: none); draft tokens
  // (speculative decoding) only fill what the former left of it.
  virtual int32_t token_budget() const { return 0; }
  // Request `id` leaves the scheduler (finished or aborted), before the caller
  // frees its KV: formers with their own state (groups, loans) forget it.
  virtual void on_remove(RequestId id) {}
  // The key under which running request r, preempted offload-free (held), waits
  // in the held queue: arrival order, or a former's own structure (EcoServe's GT
  // groups register it there).
  virtual QueueKey place_held(const Request& r, double now) { return Scheduler::arrival_key(r); }
  // Audits the former's own state against the queues and the KV manager; throws
  // std::logic_error naming the first violation.
  virtual void check_invariants(const SchedulerQueues& queues, const KvManager& kv) const {}
};

}  // namespace seer
