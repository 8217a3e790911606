#include "scheduler/parts/ordering.h"

#include "common/error.h"

namespace seer {

std::unique_ptr<Ordering> make_ordering(std::string_view name) {
  if (name == "fcfs") return std::make_unique<FcfsOrdering>();
  if (name == "priority") return std::make_unique<PriorityOrdering>();
  if (name == "deadline") return std::make_unique<DeadlineOrdering>();
  fail("scheduler: unknown ordering '{}' (expected fcfs, priority or deadline)", name);
}

}  // namespace seer
