#pragma once
// Shared by the simulator tests: a small setup and synthetic traces.
#include "sim/sim_runner.h"
#include "sim/trace_generator.h"

namespace seer::testing {

inline TraceEntry entry(const std::string& id, double arrival_s, int32_t prompt_tokens, int32_t output_tokens) {
  TraceEntry e;
  e.id = id;
  e.arrival_s = arrival_s;
  e.prompt_tokens = prompt_tokens;
  e.output_tokens = output_tokens;
  return e;
}

// Llama-2-7B on an A100 with `kv_tokens` tokens of KV cache (so small traces meet
// memory pressure) and the given policy.
inline SimSetup small_setup(const std::string& policy, int32_t kv_tokens = 1 << 20) {
  Catalog catalog = Catalog::load(Catalog::default_dir());
  SimSetup s;
  s.model = catalog.model("Llama-2-7B");
  s.hardware = catalog.hardware("A100-80GB");
  s.scheduler.policy = policy;
  s.scheduler.tbt_slo_s = 0.05;
  s.scheduler.tile = 128;
  s.check_invariants = true;
  s.max_model_len = 4096;
  CostModel cost(s.model, s.hardware, s.cost);
  double bytes = double(cost.weight_bytes_per_device()) + double(kv_tokens) * cost.kv_bytes_per_token_per_device();
  s.kv_fraction = std::min(1.0, (bytes + 1024.0) / double(s.hardware.memory_bytes));
  return s;
}

inline std::vector<TraceEntry> synthetic_trace(int64_t n, double rate, uint64_t seed, double prompt_mean = 400,
                                               double output_mean = 100) {
  TraceGeneratorOptions o;
  o.num = n;
  o.arrivals.rate = rate;
  o.seed = seed;
  o.synthetic.prompt_mean = prompt_mean;
  o.synthetic.output_mean = output_mean;
  o.synthetic.prompt_max = 2000;
  o.synthetic.output_max = 1000;
  return generate_trace(o);
}

}  // namespace seer::testing
