// `vllm`: block-allocation on demand (PagedAttention), prefill-prioritizing
// iterations, preemption of the latest-arrived request by recompute or swap
// [vLLM v0].
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/whole_prompt_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "block" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<WholePromptFormer>(/*stall_decodes=*/true, c.max_num_batched_tokens);
  parts.limits = SessionLimits{c.max_batch_size, c.watermark, c.preemption};
  return std::make_unique<ComposedScheduler>("vllm", std::move(parts));
}

}  // namespace seer
