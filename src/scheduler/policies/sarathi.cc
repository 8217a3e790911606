// `sarathi`: stall-free batching with chunked prefill under a token budget chosen
// from a TBT SLO, block-allocation on demand [Sarathi-Serve].
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/stall_free_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_sarathi_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "block" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<StallFreeFormer>(resolve_token_budget(c));
  parts.limits = SessionLimits{c.max_batch_size, c.watermark, c.preemption};
  return std::make_unique<ComposedScheduler>("sarathi", std::move(parts));
}

}  // namespace seer
