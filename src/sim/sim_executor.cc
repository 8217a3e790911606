#include "sim/sim_executor.h"

#include "common/error.h"

namespace seer {

IterationShape iteration_shape(const StepPlan& plan, int64_t bytes_per_block) {
  IterationShape s;
  s.chunks.reserve(plan.chunks.size());
  for (const auto& c : plan.chunks) s.chunks.push_back({c.num_tokens, c.start, c.sample, c.num_draft});
  for (const auto& op : plan.kv_ops) {
    if (op.kind == KvOpKind::Copy)
      s.copy_bytes += bytes_per_block;
    else
      s.swap_bytes += bytes_per_block;
  }
  return s;
}

StepResult SimExecutor::execute(const StepPlan& plan) {
  StepResult result;
  result.elapsed_s = cost_.iteration_time(iteration_shape(plan, bytes_per_block_));
  for (const auto& c : plan.chunks)
    if (c.sample) {
      int32_t accepted = 0;
      while (accepted < c.num_draft && rng_.uniform() < acceptance_) ++accepted;
      for (int32_t i = 0; i <= accepted; ++i) result.sampled.push_back({c.request, sampled_token_, 0.0f});
    }
  return result;
}

void SimExecutor::model_speculation(double acceptance, uint64_t seed) {
  if (!(acceptance >= 0 && acceptance <= 1)) fail("simulated speculation: acceptance must be in [0, 1] (got {})", acceptance);
  acceptance_ = acceptance;
  rng_ = Rng(seed);
}

}  // namespace seer
