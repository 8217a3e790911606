#include "scheduler/parts/schedule_session.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "scheduler/parts/preemption.h"

namespace seer {

void ScheduleSession::add_chunk(Request& r, int32_t n) {
  int32_t start = r.num_computed_tokens;
  if (n <= 0 || start + n > r.num_tokens())
    throw std::logic_error(fmt::format("chunk [{}, {}) of request {} with {} tokens", start, start + n, r.id,
                                       r.num_tokens()));
  plan_.chunks.push_back(ScheduledChunk{r.id, start, n, start + n == r.num_tokens()});
  tokens_ += n;
  ++live_chunks_;
}

void ScheduleSession::unschedule(RequestId id) {
  for (auto& c : plan_.chunks) {
    if (c.request != id || c.num_tokens == 0) continue;
    tokens_ -= c.num_tokens;
    --live_chunks_;
    c.num_tokens = 0;  // removed in finish()
  }
}

void ScheduleSession::preempt(Request& r) { preempt(r, limits_.preemption); }

void ScheduleSession::preempt(Request& r, PreemptionMode mode) {
  if (mode == PreemptionMode::Held) {
    hold(r, q_.named("held", RequestState::Held), Scheduler::arrival_key(r));
    return;
  }
  if (!q_.running.erase(r.id)) q_.erase_named(r.id);
  unschedule(r.id);
  Preemption p = preempt_request(r, mode, ctx_.kv, plan_.kv_ops);
  if (r.state == RequestState::Swapped)
    q_.swapped.insert(r, Scheduler::arrival_key(r));
  else
    q_.waiting.insert(r, ordering_.key(r));
  plan_.preemptions.push_back(p);
}

void ScheduleSession::hold(Request& r, RequestQueue& held, const QueueKey& key, bool preempted) {
  q_.running.erase(r.id);
  unschedule(r.id);
  const int32_t preemptions = r.preemptions;
  Preemption p = preempt_request(r, PreemptionMode::Held, ctx_.kv, plan_.kv_ops);
  if (r.state == RequestState::Held)
    held.insert(r, key);
  else
    q_.waiting.insert(r, ordering_.key(r));
  if (preempted || r.state != RequestState::Held)
    plan_.preemptions.push_back(p);
  else
    r.preemptions = preemptions;
}

bool ScheduleSession::unhold(Request& r, RequestQueue& held, int32_t reserve_blocks, int32_t n, int32_t available) {
  KvManager& kv = ctx_.kv;
  const int32_t have = kv.num_device_blocks(r.id);
  const int32_t reserve = std::max(reserve_blocks, have);
  const int32_t promised = std::max(have, kv.reserved_blocks(r.id));
  const int32_t need = std::max(reserve, kv.blocks_for_tokens(r.num_computed_tokens + n)) - promised;
  if (need > available || need > kv.num_available_blocks()) return false;
  if (!kv.reserve(r.id, reserve) || !kv.allocate(r.id, r.num_computed_tokens + n))
    throw std::logic_error(fmt::format("kv: held request {} did not get the blocks it was promised", r.id));
  r.reserved_tokens = reserve * kv.block_size();
  held.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  add_chunk(r, n);
  return true;
}

bool ScheduleSession::ensure_kv(Request& r, int32_t tokens) {
  bool failed = false;
  while (!ctx_.kv.allocate(r.id, tokens)) {
    if (!failed) ++plan_.allocation_failures;
    failed = true;
    Request& victim = q_.running.back();
    preempt(victim);
    if (&victim == &r) return false;
  }
  return true;
}

int32_t ScheduleSession::tokens_that_fit(const Request& r, int32_t want) const {
  const KvManager& kv = ctx_.kv;
  if (kv.can_allocate(r.id, r.num_computed_tokens + want)) return want;
  // Blocks r may take: its own unused reservation plus the available pool.
  int32_t have = kv.num_logical_blocks(r.id);
  int32_t own_unused = std::max(0, kv.reserved_blocks(r.id) - kv.num_device_blocks(r.id));
  int32_t coverable = (have + own_unused + kv.num_available_blocks()) * kv.block_size();
  return std::clamp(coverable - r.num_computed_tokens, 0, want);
}

int32_t ScheduleSession::available_for_admission() const {
  int32_t avail = ctx_.kv.num_available_blocks();
  if (q_.running.empty()) return avail;
  return avail - static_cast<int32_t>(limits_.watermark * ctx_.kv.num_blocks());
}

bool ScheduleSession::admit(Request& r, int32_t n) {
  KvManager& kv = ctx_.kv;
  if (kv.num_device_blocks(r.id) != 0 || kv.reserved_blocks(r.id) != 0)
    throw std::logic_error(fmt::format("waiting request {} holds KV", r.id));
  int32_t reserve_tokens = allocation_.reservation_tokens(r);
  int32_t reserve = kv.blocks_for_tokens(reserve_tokens);
  int32_t need = std::max(reserve, kv.blocks_for_tokens(r.num_computed_tokens + n));
  if (need > available_for_admission()) return false;
  kv.reserve(r.id, reserve);
  kv.allocate(r.id, r.num_computed_tokens + n);
  r.reserved_tokens = reserve_tokens;
  q_.waiting.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  add_chunk(r, n);
  return true;
}

bool ScheduleSession::resume(Request& r, int32_t n) {
  KvManager& kv = ctx_.kv;
  int32_t reserve_tokens = allocation_.reservation_tokens(r);
  int32_t reserve = kv.blocks_for_tokens(reserve_tokens);
  // A swapped request holds no device blocks: everything it needs comes from the
  // available pool.
  int32_t covered = kv.blocks_for_tokens(r.num_computed_tokens + n);
  int32_t grow = std::max(0, covered - kv.num_logical_blocks(r.id));
  int32_t need = std::max(reserve, kv.num_host_blocks(r.id) + grow);
  if (need > available_for_admission()) return false;
  kv.reserve(r.id, reserve);
  kv.swap_in(r.id, plan_.kv_ops);
  kv.allocate(r.id, r.num_computed_tokens + n);
  r.reserved_tokens = reserve_tokens;
  q_.swapped.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  add_chunk(r, n);
  return true;
}

StepPlan ScheduleSession::finish() {
  std::erase_if(plan_.chunks, [](const ScheduledChunk& c) { return c.num_tokens == 0; });
  return std::move(plan_);
}

}  // namespace seer
