#include "sim/sim_executor.h"

namespace seer {

IterationShape iteration_shape(const StepPlan& plan, int64_t bytes_per_block) {
  IterationShape s;
  s.chunks.reserve(plan.chunks.size());
  for (const auto& c : plan.chunks) s.chunks.push_back({c.num_tokens, c.start, c.sample});
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
    if (c.sample) result.sampled.push_back({c.request, sampled_token_, 0.0f});
  return result;
}

}  // namespace seer
