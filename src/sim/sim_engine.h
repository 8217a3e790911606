#pragma once
// One simulated engine (docs/architecture.md §2): the SimExecutor and VirtualClock
// a SimSetup describes, under the same EngineStack (KV manager, scheduler and its
// conversation cache, predictor, Engine) `seer serve` builds. `seer sim` runs one; the replica set (sim/replica_set.h) runs
// several under one event loop.
#include <memory>
#include <optional>

#include "common/clock.h"
#include "engine/draft_proposer.h"
#include "engine/engine.h"
#include "engine/engine_stack.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "kv/shared_kv_tier.h"
#include "predict/length_predictor.h"
#include "scheduler/scheduler.h"
#include "sim/arrival_feed.h"
#include "sim/metrics_summary.h"
#include "sim/sim_executor.h"
#include "sim/sim_runner.h"

namespace seer {

class SimEngine {
 public:
  // `cost` must outlive the engine; `shared` (optional) is the tier below the
  // conversation cache's host tier.
  SimEngine(const SimSetup& setup, const CostModel& cost, SharedKvTier* shared = nullptr);
  SimEngine(const SimEngine&) = delete;
  SimEngine& operator=(const SimEngine&) = delete;

  Engine& engine() { return stack_->engine(); }
  const Engine& engine() const { return stack_->engine(); }
  VirtualClock& clock() { return clock_; }
  const KvManager& kv() const { return stack_->kv(); }
  // The scheduler's conversation cache (stateful policies; null otherwise).
  const ConversationCache* cache() const { return stack_->scheduler().conversations().cache(); }
  LengthPredictor* predictor() { return stack_->predictor(); }
  const SchedulerConfig& scheduler_config() const { return sched_config_; }
  int32_t max_model_len() const { return stack_->engine().config().max_model_len; }

  // The request of a trace entry the feed released; nullopt when even one output
  // token does not fit the context. Sets `truncated` when the true output length
  // was cut to max_tokens.
  std::optional<Request> make_request(const TraceEntry& e, const ArrivalFeed::Ready& ready, bool& truncated) const;
  // With SimSetup::slo_from_trace_means: the trace whose mean prefill and decode-step
  // times the deadlines use (call before the first make_request).
  void set_slo_trace(const std::vector<TraceEntry>& trace);

 private:
  const SimSetup& setup_;
  const CostModel& cost_;
  SchedulerConfig sched_config_;  // with the iteration-time profile the stack derived
  SimExecutor executor_;
  VirtualClock clock_;
  std::unique_ptr<EngineStack> stack_;
  std::optional<std::pair<double, double>> slo_means_;  // t_p, t_g over the trace
};

// The metrics record of a finished request that came from trace entry `e`.
RequestRecord sim_record_of(const Request& r, const TraceEntry& e);

}  // namespace seer
