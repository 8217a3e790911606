#include "scheduler/parts/static_former.h"

namespace seer {

bool StaticFormer::fits_token_cap(const ScheduleSession& s, int32_t n) const {
  return max_tokens_ <= 0 || s.plan_empty() || s.num_tokens() + n <= max_tokens_;
}

void StaticFormer::form(ScheduleSession& s) {
  auto& q = s.queues();
  if (!q.running.empty()) {
    for (auto it = q.running.begin(); it != q.running.end(); ++it) {
      Request& r = *it->request;
      if (!s.ensure_kv(r, r.num_tokens())) break;
      s.add_chunk(r, r.num_tokens() - r.num_computed_tokens);
    }
    return;
  }
  // A new batch: members preempted by swap come back first, then waiting ones.
  while (!q.swapped.empty() && !s.running_full()) {
    Request& r = q.swapped.front();
    int32_t n = r.num_tokens() - r.num_computed_tokens;
    if (!fits_token_cap(s, n) || !s.resume(r, n)) break;
  }
  if (!q.swapped.empty()) return;
  while (!q.waiting.empty() && !s.running_full()) {
    Request& r = q.waiting.front();
    int32_t n = r.num_tokens() - r.num_computed_tokens;
    if (!fits_token_cap(s, n) || !s.admit(r, n)) break;
  }
}

}  // namespace seer
