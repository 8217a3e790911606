#pragma once
// EcoServe's ordering by bucketed keys (docs/ecoserve.md): lexicographic on the
// SLO deadline bucket (ascending: tight deadlines first), then the length bucket
// (128 tokens; descending: long prompts / long generations first, so the short
// ones can fill the room that is left), then occupied KV (descending), then
// arrival. Keys are small integers in QueueKey's doubles, so a best-fit search is
// a std::set lower_bound (see best_fit()).
#include <cstdint>

#include "scheduler/parts/ordering.h"
#include "scheduler/request_queue.h"

namespace seer {

inline constexpr int32_t kLengthBucketTokens = 128;

// 0: deadline <= 0.5 s, 1: <= 2 s, 2: longer, 3: no deadline.
inline constexpr int32_t kDeadlineBuckets = 4;
int32_t deadline_bucket(const Slo& slo);
// The bucket of the time left until `r`'s deadline at `now` (a deadline already
// passed is the tightest bucket); 3 without a deadline.
int32_t time_left_bucket(const Request& r, double now);
// The order within a deadline class of the held GT queue: (-length bucket,
// -occupied KV) or, the paper's, (-occupied KV bucket, -length bucket).
enum class HeldOrder { LengthFirst, KvFirst };
// The length bucket of a held key (negated in the key).
inline int32_t key_length_bucket(const QueueKey& key, HeldOrder order) {
  return static_cast<int32_t>(-(order == HeldOrder::KvFirst ? key.k[2] : key.k[1]));
}

// ceil(tokens / 128): the bucket of a length.
int32_t length_bucket(int32_t tokens);

// The prompt-task queue's ordering (policy ecoserve-sdo and ecoserve): deadline
// bucket, prompt length bucket descending, arrival.
class EcoOrdering final : public Ordering {
 public:
  std::string_view name() const override { return "eco"; }
  QueueKey key(const Request& r) const override;
};

// In a queue ordered by (k[0], -length bucket, ...) keys: the first entry after
// `from` with the same k[0] whose length bucket is at most `max_bucket`, i.e. the
// longest task in that deadline class that may fit. O(log n).
RequestQueue::iterator best_fit(const RequestQueue& q, RequestQueue::iterator from, int32_t max_bucket);
// The same in a queue ordered by (k[0], -occupied KV, -length bucket) keys (the
// paper's order): the first entry at or after `from` in from's k[0] class whose
// length bucket is at most `max_bucket`, in queue order (largest occupied KV
// first). O(occupied sub-classes x log n).
RequestQueue::iterator best_fit_kv_first(const RequestQueue& q, RequestQueue::iterator from, int32_t max_bucket);
// The first entry past the (k[0], k[1]) sub-class of `it`.
RequestQueue::iterator next_subclass(const RequestQueue& q, RequestQueue::iterator it);
// best_fit or best_fit_kv_first by `order`.
inline RequestQueue::iterator best_fit(const RequestQueue& q, RequestQueue::iterator from, int32_t max_bucket,
                                       HeldOrder order) {
  return order == HeldOrder::KvFirst ? best_fit_kv_first(q, from, max_bucket) : best_fit(q, from, max_bucket);
}

}  // namespace seer
