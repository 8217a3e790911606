#pragma once
// Shared by the simulator tests: a small setup and synthetic traces.
#include <fmt/format.h>

#include <random>
#include <vector>

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

// Random multi-turn conversations: Poisson conversation starts (mean gap
// `gap_mean_s`), 1..max_turns turns each, the k-th sent at start + k seconds at the
// latest (a turn waits for the previous answer plus its think time).
struct ConversationShape {
  int max_turns = 6;
  int min_prompt = 4, max_prompt = 300, max_output = 200;
  double gap_mean_s = 0.5, think_mean_s = 1.0;
};
inline std::vector<TraceEntry> random_conversations(uint64_t seed, int n, const ConversationShape& shape = {}) {
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int> turns(1, shape.max_turns), prompt(shape.min_prompt, shape.max_prompt),
      output(1, shape.max_output);
  std::exponential_distribution<double> gap(1.0 / shape.gap_mean_s), think(1.0 / shape.think_mean_s);
  std::vector<TraceEntry> out;
  double t = 0;
  for (int c = 0; c < n; ++c) {
    t += gap(rng);
    const int k_turns = turns(rng);
    for (int k = 0; k < k_turns; ++k) {
      TraceEntry e = entry(fmt::format("c{}t{}", c, k), t + k, prompt(rng), output(rng));
      e.conversation = fmt::format("c{}", c);
      e.turn = k;
      if (k > 0) e.think_s = think(rng);
      out.push_back(e);
    }
  }
  return out;
}

}  // namespace seer::testing
