#include "scheduler/parts/gt_groups.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "scheduler/parts/eco_ordering.h"

namespace seer {

int32_t GtGroups::remaining(const Request& r) {
  const int32_t predicted = r.predicted_output_len.value_or(r.sampling.max_tokens);
  return std::max(1, std::min(predicted, r.sampling.max_tokens) - r.num_output());
}

int32_t GtGroups::group_of(const Request& r) { return length_bucket(remaining(r)); }

QueueKey GtGroups::join(const Request& r, double now) {
  // Requests preempted offload-free hold KV and go first (class 0).
  const int32_t cls = r.preemptions > 0 ? 0 : 1;
  const int32_t bucket = group_of(r);
  QueueKey key{{}, r.id};
  switch (mode_) {
    case GroupMode::Fcfs:
      key.k = {double(cls), r.arrival_s, 0};
      break;
    case GroupMode::TimeSynced: {
      Group& g = groups_[{cls, bucket}];
      if (g.members == 0) g.formed_s = now;
      key.k = {double(cls), g.formed_s, double(bucket)};
      break;
    }
    case GroupMode::Ordered: {
      const int32_t occupied = length_bucket(r.num_computed_tokens);
      const int32_t deadline =
          deadline_ == DeadlineClass::TimeLeft ? time_left_bucket(r, now) : deadline_bucket(r.slo);
      key.k = order_ == HeldOrder::KvFirst
                  ? std::array<double, 3>{double(ordered_class(cls, deadline)), -double(occupied), -double(bucket)}
                  : std::array<double, 3>{double(ordered_class(cls, deadline)), -double(bucket), -double(occupied)};
      break;
    }
  }
  GroupId id{static_cast<int32_t>(key.k[0]), bucket};
  if (mode_ == GroupMode::TimeSynced) id = {cls, bucket};
  ++groups_[id].members;
  member_of_[r.id] = id;
  return key;
}

GtGroups::GroupId GtGroups::leave(RequestId id) {
  auto it = member_of_.find(id);
  if (it == member_of_.end()) return {-1, -1};
  const GroupId group = it->second;
  auto g = groups_.find(group);
  if (g != groups_.end() && --g->second.members <= 0) groups_.erase(g);
  member_of_.erase(it);
  return group;
}

bool GtGroups::same_group(const QueueKey& a, const QueueKey& b) const {
  switch (mode_) {
    case GroupMode::Fcfs: return false;
    case GroupMode::TimeSynced: return a.k[0] == b.k[0] && a.k[1] == b.k[1] && a.k[2] == b.k[2];
    case GroupMode::Ordered:
      return a.k[0] == b.k[0] && (order_ == HeldOrder::KvFirst ? a.k[2] == b.k[2] : a.k[1] == b.k[1]);
  }
  return false;
}

void GtGroups::check_invariants(const RequestQueue& held) const {
  if (held.size() != member_of_.size())
    throw std::logic_error(fmt::format("gt group invariant violated: {} held requests but {} group members",
                                       held.size(), member_of_.size()));
  std::map<GroupId, int32_t> counted;
  for (const auto& e : held) {
    auto it = member_of_.find(e.request->id);
    if (it == member_of_.end())
      throw std::logic_error(fmt::format("gt group invariant violated: held request {} is in no group", e.request->id));
    ++counted[it->second];
  }
  for (const auto& [id, g] : groups_)
    if (counted[id] != g.members)
      throw std::logic_error(fmt::format("gt group invariant violated: group ({}, {}) counts {} members, holds {}",
                                         id.first, id.second, g.members, counted[id]));
}

}  // namespace seer
