// `static`: request-level batching with max-allocation [FasterTransformer].
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/static_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "max" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<StaticFormer>(c.max_num_batched_tokens);
  parts.limits = SessionLimits{c.max_batch_size, 0, c.preemption};
  return std::make_unique<ComposedScheduler>("static", std::move(parts));
}

}  // namespace seer
