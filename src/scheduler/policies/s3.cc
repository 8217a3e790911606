// `s3`: output-length prediction, exact allocation by prediction, first-fit-
// decreasing packing at every iteration, and a supervisor that doubles the
// reservation of a request that outgrows it or else preempts that request (swap to
// the host tier when there is room, else recompute) [S3]. See docs/s3.md.
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/first_fit_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_s3_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "exact" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<FirstFitDecreasingFormer>(c.max_num_batched_tokens);
  // Swap falls back to recompute when the host tier is missing or full.
  parts.limits = SessionLimits{c.max_batch_size, 0, PreemptionMode::Swap};
  parts.victim = std::make_unique<RequesterVictim>();
  parts.supervisor = std::make_unique<DoublingSupervisor>();
  return std::make_unique<ComposedScheduler>("s3", std::move(parts));
}

}  // namespace seer
