// `orca`: iteration-level batching, max-allocation, whole prompts mixed with
// decodes, a batch-size cap [Orca].
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/whole_prompt_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_orca_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "max" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<WholePromptFormer>(/*stall_decodes=*/false, c.max_num_batched_tokens);
  parts.limits = SessionLimits{c.max_batch_size, 0, c.preemption};
  return std::make_unique<ComposedScheduler>("orca", std::move(parts));
}

}  // namespace seer
