#include "scheduler/parts/static_former.h"

#include "scheduler/parts/admission.h"

namespace seer {

bool StaticFormer::fits_token_cap(const ScheduleSession& s, int32_t n) const {
  return max_tokens_ <= 0 || s.plan_empty() || s.num_tokens() + n <= max_tokens_;
}

void StaticFormer::form(ScheduleSession& s) {
  auto& q = s.queues();
  if (!q.running.empty()) {
    s.for_each_running([&](Request& r) {
      if (s.ensure_kv(r, r.num_tokens())) s.add_chunk(r, r.num_tokens() - r.num_computed_tokens);
      return true;
    });
    return;
  }
  // A new batch: members preempted by swap come back first, then waiting ones.
  auto whole_rest = [&](const Request& r) {
    int32_t n = r.num_tokens() - r.num_computed_tokens;
    return fits_token_cap(s, n) ? n : 0;
  };
  admit_front_while_fits(s, q.swapped, whole_rest);
  if (!q.swapped.empty()) return;
  admit_front_while_fits(s, q.waiting, whole_rest);
}

}  // namespace seer
