#pragma once
// EcoServe's generation-task (GT) queue (docs/ecoserve.md): GTs that wait for KV
// hold their prompt's K/V on the device (state Held) in the named queue "held". The
// queue's key makes GTs with the same predicted remaining length a contiguous
// *group*, so they are admitted (started) together and finish together
// (time-synced batching). Requests preempted offload-free come first.
//  * Fcfs (ecoserve-d): no groups, arrival order.
//  * TimeSynced (ecoserve-sd): groups by remaining-length bucket, in the order the
//    groups formed.
//  * Ordered (ecoserve-sdo, ecoserve): groups by (deadline bucket, remaining-length
//    bucket descending), then occupied KV descending (eco_ordering.h); with
//    HeldOrder::KvFirst (the paper's) occupied KV before the length. The deadline
//    bucket is that of the request's relative deadline, or (DeadlineClass::TimeLeft,
//    as the paper) of the time left until it when the GT joins the queue.
#include <array>
#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include "scheduler/parts/eco_ordering.h"
#include "scheduler/request_queue.h"

namespace seer {

enum class GroupMode { Fcfs, TimeSynced, Ordered };
enum class DeadlineClass { Relative, TimeLeft };

class GtGroups {
 public:
  using GroupId = std::pair<int32_t, int32_t>;  // (key class, remaining-length bucket)

  explicit GtGroups(GroupMode mode, DeadlineClass deadline = DeadlineClass::Relative,
                    HeldOrder order = HeldOrder::LengthFirst)
      : mode_(mode), deadline_(deadline), order_(order) {}
  GroupMode mode() const { return mode_; }
  HeldOrder order() const { return order_; }

  // Predicted output tokens still to generate (at least 1). Without a prediction,
  // max_tokens stands for it.
  static int32_t remaining(const Request& r);
  // The group of `r`: its remaining-length bucket (128 tokens).
  static int32_t group_of(const Request& r);

  // The key under which `r` joins the held queue now (registers its group).
  QueueKey join(const Request& r, double now);
  // `id` left the held queue (admitted, preempted or finished); the group it was
  // in ({-1, -1} when none).
  GroupId leave(RequestId id);
  // Ordered mode: a held key's first field, from the priority class (0: preempted
  // offload-free, 1: fresh) and the deadline bucket.
  static constexpr int32_t ordered_class(int32_t priority, int32_t deadline) {
    return priority * kDeadlineBuckets + deadline;
  }
  // All its values, loosest deadline first, fresh GTs before preempted ones.
  static constexpr std::array<int32_t, 2 * kDeadlineBuckets> ordered_classes_loosest_first() {
    std::array<int32_t, 2 * kDeadlineBuckets> out{};
    size_t i = 0;
    for (int32_t priority = 1; priority >= 0; --priority)
      for (int32_t deadline = kDeadlineBuckets - 1; deadline >= 0; --deadline) out[i++] = ordered_class(priority, deadline);
    return out;
  }
  // True when two keys of the held queue belong to the same group.
  bool same_group(const QueueKey& a, const QueueKey& b) const;
  size_t num_members() const { return member_of_.size(); }
  size_t num_groups() const { return groups_.size(); }

  // Every member of `held` is registered under its key's group and vice versa.
  void check_invariants(const RequestQueue& held) const;

 private:
  struct Group {
    double formed_s = 0;
    int32_t members = 0;
  };

  GroupMode mode_;
  DeadlineClass deadline_;
  HeldOrder order_;
  std::map<GroupId, Group> groups_;
  std::unordered_map<RequestId, GroupId> member_of_;
};

}  // namespace seer
