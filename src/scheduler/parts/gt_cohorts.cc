#include "scheduler/parts/gt_cohorts.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "scheduler/parts/gt_groups.h"

namespace seer {

void GtCohorts::join(RequestId id, const CohortId& cohort) {
  leave(id);
  cohort_of_[id] = cohort;
  members_[cohort].push_back(id);
}

void GtCohorts::leave(RequestId id) {
  auto it = cohort_of_.find(id);
  if (it == cohort_of_.end()) return;
  auto m = members_.find(it->second);
  if (m != members_.end()) {
    auto& v = m->second;
    v.erase(std::remove(v.begin(), v.end(), id), v.end());
    if (v.empty()) members_.erase(m);
  }
  cohort_of_.erase(it);
}

std::vector<RequestId> GtCohorts::others(RequestId id) const {
  std::vector<RequestId> out;
  auto it = cohort_of_.find(id);
  if (it == cohort_of_.end()) return out;
  for (RequestId m : members_.at(it->second))
    if (m != id) out.push_back(m);
  return out;
}

int32_t GtCohorts::slack_blocks(const KvManager& kv, const Request& donor) {
  const KvTable& t = kv.table(donor.id);
  const int32_t needs = kv.blocks_for(donor.id, donor.num_tokens() + GtGroups::remaining(donor));
  return std::max(0, t.reserved - std::max(needs, t.num_device));
}

int32_t GtCohorts::take_slack(KvManager& kv, Request& r, int32_t want, const std::vector<Request*>& donors) {
  int32_t moved = 0;
  for (Request* d : donors) {
    if (moved >= want) break;
    const int32_t n = std::min(want - moved, slack_blocks(kv, *d));
    if (n <= 0) continue;
    const int32_t donor_reserved = kv.table(d->id).reserved - n;
    // Shrinking frees promise, which r's growth then takes: the pool's total of
    // promised blocks is unchanged.
    if (!kv.reserve(d->id, donor_reserved)) throw std::logic_error("ecoserve: a reservation did not shrink");
    d->reserved_tokens = std::min(d->reserved_tokens, kv.tokens_for(d->id, donor_reserved));
    const int32_t own = std::max(kv.table(r.id).reserved, kv.table(r.id).num_device);
    if (!kv.reserve(r.id, own + n))
      throw std::logic_error(fmt::format("ecoserve: request {} did not get its group's slack", r.id));
    moved += n;
  }
  if (moved > 0) r.reserved_tokens = kv.tokens_for(r.id, kv.table(r.id).reserved);
  return moved;
}

void GtCohorts::check_invariants(const std::function<bool(RequestId)>& running) const {
  size_t counted = 0;
  for (const auto& [cohort, ids] : members_) {
    for (RequestId id : ids) {
      auto it = cohort_of_.find(id);
      if (it == cohort_of_.end() || it->second != cohort)
        throw std::logic_error(fmt::format("gt cohort invariant violated: request {} listed in a cohort it is not in", id));
      if (!running(id))
        throw std::logic_error(fmt::format("gt cohort invariant violated: request {} is in a cohort but not running", id));
      ++counted;
    }
  }
  if (counted != cohort_of_.size())
    throw std::logic_error(fmt::format("gt cohort invariant violated: {} members listed, {} registered", counted,
                                       cohort_of_.size()));
}

}  // namespace seer
