#include "scheduler/parts/stall_free_former.h"

#include <algorithm>

namespace seer {

bool StallFreeFormer::full(const ScheduleSession& s) const {
  return left(s) <= 0 || s.running_full() || s.num_running() >= budget_;
}

void StallFreeFormer::run_decodes(ScheduleSession& s) {
  auto& running = s.queues().running;
  // Victims come from the back, so `it` stays valid unless r itself is preempted.
  for (auto it = running.begin(); it != running.end(); ++it) {
    Request& r = *it->request;
    if (r.num_tokens() - r.num_computed_tokens != 1) continue;
    if (!s.ensure_kv(r, r.num_tokens())) break;
    s.add_chunk(r, 1);
  }
}

void StallFreeFormer::continue_prefills(ScheduleSession& s) {
  auto& running = s.queues().running;
  for (auto it = running.begin(); it != running.end() && left(s) > 0; ++it) {
    Request& r = *it->request;
    int32_t remaining = r.num_tokens() - r.num_computed_tokens;
    if (remaining <= 1) continue;  // a decode, scheduled above
    const int32_t want = std::min(remaining, left(s));
    int32_t n = s.tokens_that_fit(r, want);
    if (n < want && s.make_room_for(r, r.num_computed_tokens + want)) n = s.tokens_that_fit(r, want);
    if (n == 0) {
      // Not one more block is free: make room from the latest arrivals (possibly
      // decodes of this plan, which then leave it preempted) or give way.
      n = std::min(remaining, left(s));
      if (!s.ensure_kv(r, r.num_computed_tokens + n)) break;
    } else {
      s.kv().allocate(r.id, r.num_computed_tokens + n);
    }
    s.add_chunk(r, n);
  }
}

void StallFreeFormer::resume_swapped(ScheduleSession& s) {
  auto& swapped = s.queues().swapped;
  while (!swapped.empty() && !full(s)) {
    Request& r = swapped.front();
    int32_t n = std::min(r.num_tokens() - r.num_computed_tokens, left(s));
    if (!s.resume(r, n)) break;
  }
}

void StallFreeFormer::admit_new(ScheduleSession& s) {
  auto& waiting = s.queues().waiting;
  while (!waiting.empty() && !full(s)) {
    Request& r = waiting.front();
    int32_t n = std::min(r.num_tokens() - r.num_computed_tokens, left(s));
    if (!s.admit(r, n)) break;  // FCFS: no skipping ahead
  }
}

void StallFreeFormer::form(ScheduleSession& s) {
  run_decodes(s);
  continue_prefills(s);
  resume_swapped(s);
  if (s.queues().swapped.empty()) admit_new(s);
}

}  // namespace seer
