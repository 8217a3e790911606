#pragma once
// The simulator's Executor (docs/architecture.md §2): an iteration takes the time the cost model
// gives for the plan's chunks and KV operations, in virtual time. Sampled tokens are
// placeholders; simulated requests end at their true output length through
// Request::forced_output_len, which the engine enforces. It keeps no per-request
// state: the chunks' shapes and the KV operations are all the cost model needs.
#include <cstdint>

#include "engine/executor.h"
#include "sampling/rng.h"
#include "sim/cost_model.h"

namespace seer {

// The cost model's view of a plan: one ChunkShape per chunk, KV ops as bytes
// (`bytes_per_block` = K/V bytes of one block over all layers and shards).
IterationShape iteration_shape(const StepPlan& plan, int64_t bytes_per_block);

class SimExecutor final : public Executor {
 public:
  // `bytes_per_block`: K/V bytes one KV operation moves (KvConfig::bytes_per_block).
  SimExecutor(const CostModel& cost, int64_t bytes_per_block, int32_t sampled_token = 0)
      : cost_(cost), bytes_per_block_(bytes_per_block), sampled_token_(sampled_token) {}

  // Speculative decoding (docs/speculative.md): a chunk's drafts are accepted in
  // turn, each with probability `acceptance`, until the first rejection (a seeded
  // stream: the same run gives the same acceptances). Throws seer::Error unless 0 <= acceptance <= 1.
  void model_speculation(double acceptance, uint64_t seed);

  StepResult execute(const StepPlan& plan) override;
  bool simulated() const override { return true; }
  bool needs_request_data() const override { return false; }

  const CostModel& cost() const { return cost_; }

 private:
  const CostModel& cost_;
  int64_t bytes_per_block_;
  int32_t sampled_token_;  // what every simulated sample returns: simulated requests end at their true length
  double acceptance_ = 0;
  Rng rng_{0};
};

}  // namespace seer
