#include "scheduler/parts/stall_free_former.h"

#include <algorithm>

namespace seer {

bool StallFreeFormer::full(const ScheduleSession& s) const {
  return left(s) <= 0 || s.running_full() || s.num_running() >= budget_;
}

int32_t StallFreeFormer::next_chunk(const ScheduleSession& s, const Request& r) const {
  return full(s) ? 0 : std::min(r.num_tokens() - r.num_computed_tokens, left(s));
}

void StallFreeFormer::run_decodes(ScheduleSession& s) {
  s.for_each_running([&](Request& r) {
    if (r.num_tokens() - r.num_computed_tokens == 1 && s.ensure_kv(r, r.num_tokens())) s.add_chunk(r, 1);
    return true;
  });
}

void StallFreeFormer::continue_prefills(ScheduleSession& s) {
  s.for_each_running([&](Request& r) {
    if (left(s) <= 0) return false;
    int32_t remaining = r.num_tokens() - r.num_computed_tokens;
    if (remaining <= 1) return true;  // a decode, scheduled above
    const int32_t want = std::min(remaining, left(s));
    int32_t n = s.tokens_that_fit(r, want);
    if (n < want && s.make_room_for(r, r.num_computed_tokens + want)) n = s.tokens_that_fit(r, want);
    if (n == 0) {
      // Not one more block is free: make room (the victim policy chooses; possibly
      // decodes of this plan, which then leave it preempted) or give way.
      n = std::min(remaining, left(s));
      if (!s.ensure_kv(r, r.num_computed_tokens + n)) return true;
    } else {
      s.kv().allocate(r.id, r.num_computed_tokens + n);
    }
    s.add_chunk(r, n);
    return true;
  });
}

void StallFreeFormer::resume_swapped(ScheduleSession& s) {
  s.admit_front_while_fits(s.queues().swapped, [&](const Request& r) { return next_chunk(s, r); });
}

void StallFreeFormer::admit_new(ScheduleSession& s) {
  // FCFS: no skipping ahead.
  s.admit_front_while_fits(s.queues().waiting, [&](const Request& r) { return next_chunk(s, r); });
}

void StallFreeFormer::form(ScheduleSession& s) {
  run_decodes(s);
  continue_prefills(s);
  resume_swapped(s);
  if (s.queues().swapped.empty()) admit_new(s);
}

}  // namespace seer
