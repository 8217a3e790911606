#include "engine/iteration_log.h"

#include <fmt/format.h>

#include "common/error.h"
#include "scheduler/step_plan.h"

namespace seer {

IterationLog::IterationLog(const std::string& path, int64_t bytes_per_block)
    : out_(path, std::ios::trunc), bytes_per_block_(bytes_per_block) {
  if (!out_) fail("--iteration-log: cannot write {}", path);
}

void IterationLog::on_plan(const StepPlan& plan) {
  pending_chunks_ = "[";
  for (size_t i = 0; i < plan.chunks.size(); ++i) {
    const ScheduledChunk& c = plan.chunks[i];
    pending_chunks_ += fmt::format("{}[{},{},{}]", i ? "," : "", c.num_tokens, c.start, c.sample ? 1 : 0);
  }
  pending_chunks_ += "]";
  pending_swap_bytes_ = pending_copy_bytes_ = 0;
  for (const KvOp& op : plan.kv_ops) (op.kind == KvOpKind::Copy ? pending_copy_bytes_ : pending_swap_bytes_) += bytes_per_block_;
}

void IterationLog::on_iteration(const IterationStats& st) {
  // chunks: [query tokens, context before them, sampled]
  out_ << fmt::format(
              R"({{"start_s":{:.6f},"elapsed_s":{:.7f},"scheduler_s":{:.7f},"swap_bytes":{},"copy_bytes":{},"kv_bytes":{},"chunks":{}}})",
              st.start_s, st.elapsed_s, st.scheduler_time_s, pending_swap_bytes_, pending_copy_bytes_, st.kv_bytes,
              pending_chunks_)
       << '\n';
  out_.flush();
}

}  // namespace seer
