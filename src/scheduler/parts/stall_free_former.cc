#include "scheduler/parts/stall_free_former.h"

#include <algorithm>

#include "scheduler/parts/admission.h"

namespace seer {

bool StallFreeFormer::has_held(ScheduleSession& s) {
  const auto* held = s.queues().find_named(kHeldQueue);
  return held && !held->queue.empty();
}

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
      s.add_chunk(r, n);
    } else {
      s.add_chunk_allocating(r, n);
    }
    return true;
  });
}

void StallFreeFormer::resume_held(ScheduleSession& s) {
  if (!s.queues().find_named(kHeldQueue)) return;
  RequestQueue& held = s.queues().named(kHeldQueue, RequestState::Held);
  while (!held.empty() && !full(s)) {
    Request& r = held.front();
    const int32_t n = next_chunk(s, r);
    const KvManager& kv = s.kv();
    const int32_t reserve = kv.blocks_for(r.id, s.reservation_tokens(r));
    // Cached conversations give way to a held request.
    if (n > 0 && s.unhold(r, held, reserve, n, s.free_or_cached_blocks())) continue;
    // Held KV that nothing running will free: the latest held request recomputes
    // later, so the front can run.
    if (s.plan_empty() && s.num_running() == 0) {
      s.preempt(held.back(), PreemptionMode::Recompute);
      continue;
    }
    return;
  }
}

void StallFreeFormer::resume_swapped(ScheduleSession& s) {
  admit_front_while_fits(s, s.queues().swapped, [&](const Request& r) { return next_chunk(s, r); });
}

void StallFreeFormer::admit_new(ScheduleSession& s) {
  // FCFS: no skipping ahead.
  admit_front_while_fits(s, s.queues().waiting, [&](const Request& r) { return next_chunk(s, r); });
}

void StallFreeFormer::form(ScheduleSession& s) {
  run_decodes(s);
  continue_prefills(s);
  resume_held(s);
  resume_swapped(s);
  if (s.queues().swapped.empty() && !has_held(s)) admit_new(s);
}

}  // namespace seer
