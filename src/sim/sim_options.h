#pragma once
// The flags shared by `seer sim`, `sim capacity` and `sim sweep`, and how they turn
// into a SimSetup and a trace.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "predict/predictor_flags.h"
#include "scheduler/scheduler_knobs.h"
#include "sim/sim_runner.h"
#include "sim/trace.h"

namespace seer {

// The knobs `seer serve` shares are StackKnobs' (scheduler/scheduler_knobs.h); the
// rest is the simulator's own.
struct SimOptions : StackKnobs {
  std::string trace;
  std::string model;
  std::string hardware = "A100-80GB";
  std::string catalog_dir;  // "": Catalog::default_dir()
  double rate = 0;  // 0: the trace's own arrival times
  int64_t num = 0;  // 0: the whole trace
  int tp = 1;
  int pp = 1;              // pipeline stages
  int gpus_per_node = 0;   // 0: the hardware entry's
  std::string cluster;     // a catalog cluster: sets hardware, tp, pp and gpus_per_node
  double kv_fraction = 0.9;
  double swap_space_gib = 4;
  std::string kv_type = "f16";  // K/V element: sets the cost model's bytes per element
  // Expected share of requests decoding under a grammar (response_format, tools):
  // their token masks add host CPU time per step (CostModelOptions::constrained_share).
  double constrained_share = 0;
  int sampling_threads = 8;  // host threads the executor samples on (CostModelOptions)
  int32_t max_tokens = 0;
  double profile_kv_fraction = 1.0;
  // Device KV pool in bytes (0: what --kv-fraction leaves after the weights).
  int64_t kv_memory_bytes = 0;
  // Deadline of each request without one: scale x (t_p + t_g x output), t_p and t_g
  // from the cost model (0: none) [EcoServe].
  double slo_scale = 2.0;
  std::string slo_base = "request";  // request | trace (SimSetup::slo_from_trace_means)
  std::optional<double> padding;  // exact allocation padding (unset: the policy's default)
  // Speculative decoding modelled (docs/speculative.md): each draft is accepted with
  // this probability (unset: no speculation).
  std::optional<double> speculate_acceptance;
  double draft_cost_s = 0;  // --draft-cost: a draft model's seconds per proposed draft token
  PredictorFlags predictor;       // --predictor ("", oracle, noisy:ACC, a file), --predictor-buckets, ...
  bool check_invariants = false;
  bool progress = true;
};

// Resolves the model (a catalog name, or a GGUF/llama2.c file whose shape is read),
// hardware and scheduler settings. Throws seer::Error naming the bad flag.
SimSetup make_sim_setup(const SimOptions& o);
// Reads the trace, keeps its first `num` requests by arrival, rescales to `rate`.
std::vector<TraceEntry> load_sim_trace(const SimOptions& o);

}  // namespace seer
