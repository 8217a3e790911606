#include "scheduler/composed_scheduler.h"

#include <stdexcept>

namespace seer {

ComposedScheduler::ComposedScheduler(std::string name, SchedulerParts parts)
    : name_(std::move(name)), parts_(std::move(parts)) {
  if (!parts_.allocation || !parts_.ordering || !parts_.former)
    throw std::logic_error("scheduler " + name_ + " is missing a part");
  if (!parts_.victim) parts_.victim = std::make_unique<LatestArrivalVictim>();
}

StepPlan ComposedScheduler::schedule(SchedulerContext& ctx) {
  ScheduleSession session(ctx, conversations_.planning_cache(), queues_, *parts_.allocation, *parts_.ordering, parts_.limits, *parts_.victim,
                          parts_.supervisor.get(), parts_.former.get());
  parts_.former->form(session);
  return session.finish();
}

bool ComposedScheduler::remove(RequestId id) {
  parts_.former->on_remove(id);
  return Scheduler::remove(id);
}

void ComposedScheduler::check_invariants(const RequestTable& requests, const KvManager& kv) const {
  Scheduler::check_invariants(requests, kv);
  parts_.former->check_invariants(queues_, kv);
}

}  // namespace seer
