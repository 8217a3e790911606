#pragma once
// The engine loop (docs/architecture.md §2): 1. scheduler.schedule() -> StepPlan, 2.
// executor.execute(plan) -> StepResult, 3. commit: append tokens, stop checks,
// free/cache KV, stream out. The same loop drives the server (ModelExecutor,
// WallClock) and the simulator (SimExecutor, VirtualClock).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/clock.h"
#include "engine/executor.h"
#include "engine/executor_feed.h"
#include "engine/speculation_gate.h"
#include "scheduler/request_table.h"

namespace seer {

class Scheduler;
class Conversations;
class LengthPredictor;
class KvManager;
class DraftProposer;
struct StepPlan;
struct IterationStats;

#ifdef NDEBUG
inline constexpr bool kCheckInvariantsByDefault = false;
#else
inline constexpr bool kCheckInvariantsByDefault = true;  // debug builds audit every step
#endif

struct EngineConfig {
  int32_t max_model_len = 2048;        // prompt + max_tokens must fit
  std::vector<int32_t> eos_ids;        // end-of-generation tokens (unless ignore_eos)
  // Run the KV and queue invariant checkers after every step (throws
  // std::logic_error naming the first violation).
  bool check_invariants = kCheckInvariantsByDefault;
  int32_t vocab_size = 0;              // > 0: prompt token ids must lie in [0, vocab_size)
  // Sets Request::predicted_output_len of each new request (unless already set)
  // and sees every finished one. Not owned; nullptr: no prediction.
  LengthPredictor* predictor = nullptr;
  // Speculative decoding (docs/speculative.md): proposes each request's draft
  // tokens after every step it advances, and is told when a request finishes, is
  // aborted or preempted (DraftProposer::forget); null: off. Not owned.
  DraftProposer* drafter = nullptr;
  // Pauses a request's drafting while its drafts do not pay (engine/speculation_gate.h).
  SpeculationGateConfig speculation_gate;
};

// The most tokens (prompt + max_tokens) one request may reach: the context limit,
// and never more than the whole device KV pool holds. The one formula behind the
// engine's check in add_request and the server's 400 context_length_exceeded.
int32_t max_request_tokens(int32_t max_model_len, int64_t pool_tokens);

// Called on the engine thread.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // After the executor's sampled token (with its logprob) was appended to
  // r.output_tokens. Return true to finish the request now with FinishReason::Stop
  // (e.g. a stop string matched).
  virtual bool on_token(const Request& r, const SampledToken& sampled) { return false; }
  // Once, when the request finished for any reason, before it is removed.
  virtual void on_finished(const Request& r) {}
  // Every non-empty plan, after schedule() and before execution, as the executor
  // receives it (schedule logs, engine-vs-simulator comparisons, plan replays).
  virtual void on_plan(const StepPlan& plan) {}
  // After every step() that ran an iteration, with its statistics.
  virtual void on_iteration(const IterationStats& stats) {}
};

struct IterationStats {
  double start_s = 0;
  double elapsed_s = 0;          // executor time (measured or modelled)
  double scheduler_time_s = 0;   // wall time spent in schedule()
  int32_t batch_size = 0;        // requests in the plan
  int32_t num_tokens = 0;        // tokens in the plan
  int32_t preemptions = 0;
  int32_t allocation_failures = 0;
  int64_t swapped_bytes = 0;
  int32_t recomputed_tokens = 0;
  double kv_utilization = 0;     // used device blocks / total
  int64_t kv_bytes = 0;          // bytes of the used device blocks, the plan's allocations included
  bool idle = false;             // nothing was runnable
};

struct EngineCounters {
  int64_t preemptions = 0;  // = preemptions_recompute + preemptions_swap + preemptions_held
  int64_t preemptions_recompute = 0;
  int64_t preemptions_swap = 0;
  int64_t preemptions_held = 0;  // offload-free: paused with device KV kept [EcoServe]
  int64_t allocation_failures = 0;
  int64_t swapped_bytes = 0;
  int64_t recomputed_tokens = 0;
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
  int64_t iterations = 0;  // non-idle steps
  int64_t finished_requests = 0;
  // S3's supervisor: reservations grown, and requests preempted because their grown
  // reservation did not fit.
  int64_t reservation_growths = 0;
  int64_t supervisor_preemptions = 0;
  // Failures inside step() the engine recovered from (recover()).
  int64_t recoveries = 0;
  // Speculative decoding: sampled chunks that verified drafts, the drafts they
  // verified and those accepted (each accepted draft is an output token a step saved).
  int64_t spec_verify_chunks = 0;
  int64_t spec_draft_tokens = 0;
  int64_t spec_accepted_tokens = 0;
  // Times the gate paused a request's drafting, and request steps it ran without
  // drafts because of a pause.
  int64_t spec_pauses = 0;
  int64_t spec_paused_steps = 0;
};

class Engine {
 public:
  Engine(Scheduler& scheduler, Executor& executor, KvManager& kv, Clock& clock, EngineConfig config = {});
  ~Engine();

  // Replaces all observers by `observer` (nullptr: none).
  void set_observer(EngineObserver* observer) {
    observers_.clear();
    if (observer) observers_.push_back(observer);
  }
  // Observers are called in the order added; on_token finishes the request when any
  // of them returns true.
  void add_observer(EngineObserver* observer) { observers_.push_back(observer); }

  // Validates the request (non-empty prompt, prompt + max_tokens <= max_model_len,
  // forced_output_len <= max_tokens, sampling parameters, needs no more KV than the
  // device pool has) and queues it; throws seer::Error otherwise. Assigns and returns
  // r.id; r.arrival_s < 0 means "now".
  RequestId add_request(Request r);
  // max_request_tokens() of this engine's context limit and device pool.
  int32_t max_request_tokens() const;
  // Finishes a live request with FinishReason::Abort (on_finished is called) and
  // frees its KV at once. Returns false when no live request has this id. Called
  // from an observer during step(), it takes effect at the end of that step's commit.
  [[nodiscard]] bool abort_request(RequestId id);
  // Forgets a conversation (DELETE /v1/conversations/{id}, docs/pensieve.md): frees
  // its cached history and KV, and marks its live turns (Request::
  // conversation_deleted) so that their KV is freed when they finish instead of
  // becoming the conversation again. Idle conversations expire first (as on every
  // arrival, so an expired id is never continued). False when there was nothing to
  // forget: unknown, expired, or deleted already.
  [[nodiscard]] bool delete_conversation(const std::string& conversation);

  bool has_unfinished() const;
  size_t num_running() const;
  size_t num_waiting() const;  // waiting + swapped + held
  size_t num_swapped() const;

  // One iteration: schedule, execute, commit. When nothing is runnable, returns
  // stats with idle = true without calling the executor (a simulator then advances
  // its clock to the next arrival).
  IterationStats step();

  // After step() threw (an invariant failure, a backend error): every unfinished
  // request ends with FinishReason::Error and `why` (observers are told), the
  // scheduler's queues, the KV manager and the conversation cache are rebuilt empty,
  // and the rebuilt state's invariants are checked. Returns the requests it ended.
  // Throws only when even the rebuilt state is inconsistent.
  size_t recover(const std::string& why);
  // A few lines on the queues, the KV pools and each live request (at most 32), for
  // the log of a failure; never throws.
  std::string state_dump() const;

  const RequestTable& requests() const { return requests_; }
  const KvManager& kv() const { return kv_; }
  const Scheduler& scheduler() const { return scheduler_; }
  // The scheduler's conversation hooks, for a front end's shared-tier restores.
  Conversations& conversations();
  const EngineConfig& config() const { return config_; }
  const EngineCounters& counters() const { return counters_; }
  const SpeculationGate& speculation_gate() const { return gate_; }
  Clock& clock() { return clock_; }

 private:
  Scheduler& scheduler_;
  Executor& executor_;
  KvManager& kv_;
  Clock& clock_;
  EngineConfig config_;
  std::vector<EngineObserver*> observers_;
  VirtualClock* virtual_clock_ = nullptr;  // set when the executor is simulated
  RequestTable requests_;
  ExecutorFeed feed_;  // what the executor holds of each request
  RequestId next_id_ = 0;
  EngineCounters counters_;
  SpeculationGate gate_;  // whether each request's drafts pay

  bool in_step_ = false;                 // aborts are deferred while a plan is in flight
  std::vector<RequestId> to_finish_;     // finish_reason set; finished after the commit

  void run_iteration(IterationStats& stats);  // schedule, execute, commit
  void commit(const StepPlan& plan, const StepResult& result, IterationStats& stats);
  void finish_pending();
  void append_token(Request& r, const SampledToken& s);
  // Sets r.draft_tokens from the drafter (none without one, once r is done, or
  // while the gate pauses r).
  void propose_drafts(Request& r);
  // Feeds a step made only of decodes (with their drafts) to the gate's cost fit.
  void observe_step_cost(const StepPlan& plan, double seconds);
  void finish(Request& r, FinishReason reason);
};

}  // namespace seer
