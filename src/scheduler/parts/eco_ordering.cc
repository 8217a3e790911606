#include "scheduler/parts/eco_ordering.h"

#include <algorithm>
#include <limits>

namespace seer {

namespace {

int32_t bucket_of_seconds(double s) {
  if (s <= 0.5) return 0;
  if (s <= 2.0) return 1;
  return 2;
}

}  // namespace

int32_t deadline_bucket(const Slo& slo) { return slo.deadline_s <= 0 ? 3 : bucket_of_seconds(slo.deadline_s); }

int32_t time_left_bucket(const Request& r, double now) {
  return r.slo.deadline_s <= 0 ? 3 : bucket_of_seconds(r.arrival_s + r.slo.deadline_s - now);
}

int32_t length_bucket(int32_t tokens) { return (std::max(tokens, 0) + kLengthBucketTokens - 1) / kLengthBucketTokens; }

QueueKey EcoOrdering::key(const Request& r) const {
  return QueueKey{{static_cast<double>(deadline_bucket(r.slo)), -static_cast<double>(length_bucket(r.num_tokens())),
                   r.arrival_s},
                  r.id};
}

RequestQueue::iterator best_fit(const RequestQueue& q, RequestQueue::iterator from, int32_t max_bucket) {
  if (from == q.end()) return q.end();
  const double cls = from->key.k[0];
  QueueKey probe{{cls, -static_cast<double>(max_bucket), -std::numeric_limits<double>::infinity()},
                 std::numeric_limits<RequestId>::min()};
  auto it = q.lower_bound(probe);
  if (it != q.end() && it->key < from->key) it = from;
  if (it == q.end() || it->key.k[0] != cls) return q.end();
  return it;
}

RequestQueue::iterator next_subclass(const RequestQueue& q, RequestQueue::iterator it) {
  if (it == q.end()) return it;
  const QueueKey past{{it->key.k[0], it->key.k[1], std::numeric_limits<double>::infinity()},
                      std::numeric_limits<RequestId>::max()};
  return q.lower_bound(past);  // keys hold finite lengths: the first entry past the sub-class
}

RequestQueue::iterator best_fit_kv_first(const RequestQueue& q, RequestQueue::iterator from, int32_t max_bucket) {
  if (from == q.end()) return q.end();
  const double cls = from->key.k[0];
  for (auto sub = from; sub != q.end() && sub->key.k[0] == cls; sub = next_subclass(q, sub)) {
    const QueueKey probe{{cls, sub->key.k[1], -static_cast<double>(max_bucket)}, std::numeric_limits<RequestId>::min()};
    auto it = q.lower_bound(probe);
    if (it != q.end() && it->key < sub->key) it = sub;
    if (it != q.end() && it->key.k[0] == cls && it->key.k[1] == sub->key.k[1]) return it;
  }
  return q.end();
}

}  // namespace seer
