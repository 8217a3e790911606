#pragma once
// The engine loop (DESIGN §2): 1. scheduler.schedule() -> StepPlan, 2.
// executor.execute(plan) -> StepResult, 3. commit: append tokens, stop checks,
// free/cache KV, stream out. The same loop drives the server (ModelExecutor,
// WallClock) and the simulator (SimExecutor, VirtualClock).
#include <cstdint>
#include <memory>
#include <vector>

#include "common/clock.h"
#include "engine/executor.h"
#include "scheduler/request_table.h"

namespace seer {

class Scheduler;
class KvManager;

struct EngineConfig {
  int32_t max_model_len = 2048;        // prompt + max_tokens must fit
  std::vector<int32_t> eos_ids;        // end-of-generation tokens (unless ignore_eos)
  bool check_invariants = false;       // run the KV invariant checker after every step
};

// Called on the engine thread.
class EngineObserver {
 public:
  virtual ~EngineObserver() = default;
  // After a token was appended to r.output_tokens. Return true to finish the request
  // now with FinishReason::Stop (e.g. a stop string matched).
  virtual bool on_token(const Request& r, int32_t token) { return false; }
  // Once, when the request finished for any reason, before it is removed.
  virtual void on_finished(const Request& r) {}
};

struct IterationStats {
  double start_s = 0;
  double elapsed_s = 0;          // executor time (measured or modelled)
  double scheduler_time_s = 0;   // wall time spent in schedule()
  int32_t batch_size = 0;        // requests in the plan
  int32_t num_tokens = 0;        // tokens in the plan
  int32_t preemptions = 0;
  int64_t swapped_bytes = 0;
  int32_t recomputed_tokens = 0;
  double kv_utilization = 0;     // used device blocks / total
  bool idle = false;             // nothing was runnable
};

struct EngineCounters {
  int64_t preemptions = 0;
  int64_t allocation_failures = 0;
  int64_t swapped_bytes = 0;
  int64_t recomputed_tokens = 0;
  int64_t prompt_tokens = 0;
  int64_t generation_tokens = 0;
};

class Engine {
 public:
  Engine(Scheduler& scheduler, Executor& executor, KvManager& kv, Clock& clock, EngineConfig config = {});
  ~Engine();

  void set_observer(EngineObserver* observer) { observer_ = observer; }

  // Validates the request (non-empty prompt, prompt + max_tokens <= max_model_len,
  // needs no more KV than the pool has) and queues it; throws seer::Error otherwise.
  // Assigns and returns r.id.
  RequestId add_request(Request r);
  // Finishes a request with FinishReason::Abort and frees its KV at once.
  void abort_request(RequestId id);

  bool has_unfinished() const;
  size_t num_running() const;
  size_t num_waiting() const;

  // One iteration.
  IterationStats step();

  const RequestTable& requests() const { return requests_; }
  const KvManager& kv() const { return kv_; }
  const EngineCounters& counters() const { return counters_; }
  Clock& clock() { return clock_; }

 private:
  Scheduler& scheduler_;
  Executor& executor_;
  KvManager& kv_;
  Clock& clock_;
  EngineConfig config_;
  EngineObserver* observer_ = nullptr;
  RequestTable requests_;
  RequestId next_id_ = 0;
  EngineCounters counters_;
};

}  // namespace seer
