#include "scheduler/parts/ordering.h"

#include "common/error.h"
#include "scheduler/parts/predicted_ordering.h"

namespace seer {

std::unique_ptr<Ordering> make_ordering(std::string_view name) {
  if (name == "fcfs") return std::make_unique<FcfsOrdering>();
  if (name == "priority") return std::make_unique<PriorityOrdering>();
  if (name == "deadline") return std::make_unique<DeadlineOrdering>();
  if (name == "deadline-spf") return std::make_unique<ShortestPredictedOrdering>();
  fail("scheduler: unknown ordering '{}' (expected fcfs, priority, deadline or deadline-spf)", name);
}

}  // namespace seer
