#pragma once
// One simulation: a trace through the real scheduler and engine loop, with the
// SimExecutor's cost model on a VirtualClock (docs/architecture.md §2). Requests join at their
// arrival times; when nothing runs the clock jumps to the next arrival.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "predict/predictor_flags.h"
#include "scheduler/scheduler.h"
#include "sim/catalog.h"
#include "sim/cost_model.h"
#include "sim/metrics_summary.h"
#include "sim/trace.h"

namespace seer {

struct SimSetup {
  ModelSpec model;
  HardwareSpec hardware;
  CostModelOptions cost;      // tensor-parallel degree, bytes per weight / K/V element
  SchedulerConfig scheduler;  // policy, batch cap, TBT SLO, preemption mode
  // Share of device memory for weights + K/V (vLLM's gpu_memory_utilization); the
  // rest is activations and runtime.
  double kv_fraction = 0.9;
  int32_t block_size = 16;
  // Sliding-window layers keep every position's K/V (--swa-kv full) instead of
  // their own block groups whose blocks behind the window are freed.
  bool swa_full = false;
  double swap_space_gib = 4;   // host K/V tier per device (vLLM's swap_space)
  int32_t max_model_len = 0;   // 0: the model's max_context
  // max_tokens of every request: 0 fills the context (max_model_len - prompt). A true
  // output length above it is cut to it (generation would stop there).
  int32_t max_tokens = 0;
  // Sarathi's profile points: a chunk after `profile_context` cached tokens while
  // decodes read `profile_kv_fraction` of the KV pool (1: a full pool, so the TBT
  // SLO holds even when memory is full).
  int32_t profile_context = 1024;
  double profile_kv_fraction = 1.0;
  // Output-length predictor (empty spec: none); its buckets default to the context.
  PredictorFlags predictor;
  int64_t kv_memory_bytes = 0;  // > 0: the device KV pool (instead of kv_fraction)
  double slo_scale = 0;         // > 0: deadline = scale x (t_p + t_g x output) for requests without one
  // t_p and t_g of that deadline: the request's own prefill time and decode step at its
  // prompt's context (false), or their means over the trace, as EcoServe states it (true).
  bool slo_from_trace_means = false;
  bool check_invariants = false;
  bool progress = false;           // progress bar on stderr
  // Device K/V per device in GiB; 0: what kv_fraction leaves after the weights.
  // Conversation cache of stateful policies (pensieve, pensieve-gpu).
  int32_t chunk_tokens = 32;
  double swap_out_threshold = 0.25;
  std::string eviction = "pensieve";
  // With a shared KV tier (replica sets, docs/replicas.md): store every finished
  // turn's KV there too, not only the chunks the host tier drops.
  bool shared_write_through = true;
  // Speculative decoding modelled: each of up to draft_tokens drafts per decode is
  // accepted with this probability in turn (< 0: no speculation).
  double speculate_acceptance = -1;
  int32_t draft_tokens = 4;
  // Seconds a modelled draft model spends per proposed draft token (0: free drafts,
  // as prompt lookup's); the virtual clock advances by it between steps.
  double draft_cost_s = 0;
  uint64_t speculate_seed = 0x5bec;
  bool speculate_gate = true;  // pause a request's drafts while they do not pay
};

struct SimResult {
  MetricsSummary summary;
  std::vector<RequestRecord> records;  // finished requests, in finish order
  std::vector<IterationRecord> iterations;
  int64_t rejected = 0;   // did not fit the context or the KV pool
  int64_t truncated = 0;  // output cut to max_tokens
  int32_t device_blocks = 0;
  int32_t kv_groups = 1;     // pool blocks per logical block (kv/kv_layer_groups.h)
  int32_t token_budget = 0;  // sarathi's τ (0 for other policies)
  std::optional<double> slo_attainment;  // share of requests meeting their deadline
  std::map<std::string, double> slo_attainment_by_class;  // per workload class (mixed traces)
  double wall_s = 0;
};

// The KV pool the setup leaves after the weights; throws when nothing is left.
KvConfig sim_kv_config(const SimSetup& setup, const CostModel& cost);

// One engine over the trace: the replica set's loop (sim/replica_set.h) with one
// replica. `observer` (optional) sees the engine's events too (plan recording in tests).
SimResult run_simulation(const SimSetup& setup, const std::vector<TraceEntry>& trace,
                         EngineObserver* observer = nullptr);

}  // namespace seer
