#include "scheduler/parts/ordering.h"

#include "common/error.h"

namespace seer {

std::unique_ptr<Ordering> make_ordering(std::string_view name) {
  if (name == "fcfs") return std::make_unique<FcfsOrdering>();
  if (name == "priority") return std::make_unique<PriorityOrdering>();
  fail("scheduler: unknown ordering '{}' (expected fcfs or priority)", name);
}

}  // namespace seer
