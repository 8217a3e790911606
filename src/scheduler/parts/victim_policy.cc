#include "scheduler/parts/victim_policy.h"

#include "common/error.h"

namespace seer {

std::unique_ptr<VictimPolicy> make_victim_policy(std::string_view name) {
  if (name == "latest-arrival") return std::make_unique<LatestArrivalVictim>();
  if (name == "requester") return std::make_unique<RequesterVictim>();
  fail("scheduler: unknown victim policy '{}' (expected latest-arrival or requester)", name);
}

}  // namespace seer
