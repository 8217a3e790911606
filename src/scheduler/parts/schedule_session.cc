#include "scheduler/parts/schedule_session.h"

#include <algorithm>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "scheduler/parts/preemption.h"

namespace seer {

const VictimPolicy& default_victim_policy() {
  static const LatestArrivalVictim latest;
  return latest;
}

void ScheduleSession::for_each_running(const std::function<bool(Request&)>& fn) {
  std::vector<Request*> snapshot;
  snapshot.reserve(q_.running.size());
  for (const auto& e : q_.running) snapshot.push_back(e.request);
  for (Request* r : snapshot) {
    if (r->state != RequestState::Running) continue;  // preempted by an earlier one
    if (!fn(*r)) return;
  }
}

void ScheduleSession::add_chunk(Request& r, int32_t n) { push_chunk(r, r.num_computed_tokens, n); }

void ScheduleSession::add_chunk_allocating(Request& r, int32_t n) {
  if (!ctx_.kv.allocate(r.id, r.num_computed_tokens + n))
    throw std::logic_error(fmt::format("request {}: tokens [{}, {}) do not fit in the KV it holds or reserves ({} "
                                       "device blocks, {} reserved, {} available)",
                                       r.id, r.num_computed_tokens, r.num_computed_tokens + n,
                                       ctx_.kv.table(r.id).num_device, ctx_.kv.table(r.id).reserved,
                                       ctx_.kv.usage().available()));
  add_chunk(r, n);
}

bool ScheduleSession::lend(KvLoans& loans, RequestId host, RequestId hosted, int32_t blocks) {
  return loans.lend(ctx_.kv, host, hosted, blocks);
}

void ScheduleSession::recall(KvLoans& loans, RequestId hosted, bool host_running) {
  loans.recall(ctx_.kv, hosted, host_running);
}

void ScheduleSession::settle_returned(KvLoans& loans, const std::function<bool(RequestId)>& host_running) {
  loans.settle_returned(ctx_.kv, host_running);
}

void ScheduleSession::push_chunk(Request& r, int32_t start, int32_t n) {
  if (n <= 0 || start < 0 || start + n > r.num_tokens())
    throw std::logic_error(fmt::format("chunk [{}, {}) of request {} with {} tokens", start, start + n, r.id,
                                       r.num_tokens()));
  plan_.chunks.push_back(ScheduledChunk{r.id, start, n, start + n == r.num_tokens()});
  tokens_ += n;
  ++live_chunks_;
}

void ScheduleSession::add_drafts() {
  const int32_t budget = former_ ? former_->token_budget() : 0;
  for (ScheduledChunk& c : plan_.chunks) {
    if (!c.sample || c.num_tokens == 0) continue;
    Request& r = ctx_.requests.get(c.request);
    int32_t k = static_cast<int32_t>(r.draft_tokens.size());
    if (budget > 0) k = std::min(k, budget - tokens_);
    if (k <= 0) continue;
    // Only KV free now: drafts never make anyone give way.
    const int32_t end = c.start + c.num_tokens;
    k = tokens_that_fit(r, end + k - r.num_computed_tokens) - (end - r.num_computed_tokens);
    if (k <= 0 || !ctx_.kv.allocate(r.id, end + k)) continue;
    c.num_tokens += k;
    c.num_draft = k;
    tokens_ += k;
  }
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
    const QueueKey key = former_ ? former_->place_held(r, ctx_.now) : Scheduler::arrival_key(r);
    hold(r, q_.named("held", RequestState::Held), key);
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

int32_t ScheduleSession::staged_reservation_blocks(const Request& r) const {
  if (r.reserved_tokens > 0) return 0;  // reserved at admission (or already topped up)
  const KvManager& kv = ctx_.kv;
  const int32_t due = kv.blocks_for(r.id, reservation_tokens(r));
  return std::max(0, due - std::max(kv.table(r.id).reserved, kv.table(r.id).num_device));
}

bool ScheduleSession::top_up_reservation(Request& r) {
  if (r.reserved_tokens > 0) return true;
  const int32_t due = reservation_tokens(r);
  if (due <= 0) return true;  // blocks on demand
  KvManager& kv = ctx_.kv;
  const int32_t blocks = std::max(kv.blocks_for(r.id, due), kv.table(r.id).num_device);
  if (!kv.reserve(r.id, blocks)) return false;
  r.reserved_tokens = due;
  return true;
}

bool ScheduleSession::grow(Request& r, int32_t tokens) {
  if (!top_up_reservation(r)) return false;
  const bool outgrows = supervisor_ && r.reserved_tokens > 0 && tokens > r.reserved_tokens;
  if (outgrows) {
    if (!supervisor_->extend(ctx_.kv, r, tokens)) return false;
    ++plan_.reservation_growths;
  }
  return ctx_.kv.allocate(r.id, tokens);
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
  const int32_t have = kv.table(r.id).num_device;
  const int32_t reserve = std::max(reserve_blocks, have);
  const int32_t promised = std::max(have, kv.table(r.id).reserved);
  const int32_t need = std::max(reserve, kv.blocks_for(r.id, r.num_computed_tokens + n)) - promised;
  if (need > available) return false;
  make_room(need - kv.usage().available());
  if (need > kv.usage().available()) return false;
  if (!kv.reserve(r.id, reserve) || !kv.allocate(r.id, r.num_computed_tokens + n))
    throw std::logic_error(fmt::format("kv: held request {} did not get the blocks it was promised", r.id));
  // Nothing asked for (a staged rule mid-prefill): it stays unreserved, so its
  // reservation is still topped up when decoding starts.
  r.reserved_tokens = reserve_blocks > 0 ? kv.tokens_for(r.id, reserve) : 0;
  held.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  add_chunk(r, n);
  return true;
}

void ScheduleSession::make_room(int32_t blocks, std::optional<KvOwner> keep) {
  if (cache_ && blocks > 0) cache_->make_room(blocks, ctx_.now, plan_.kv_ops, keep);
}

bool ScheduleSession::make_room_for(const Request& r, int32_t tokens) {
  if (!cache_) return false;
  const int32_t need = std::max(ctx_.kv.blocks_needed(r.id, tokens), staged_reservation_blocks(r));
  const int32_t short_by = need - ctx_.kv.usage().available();
  return short_by > 0 && cache_->make_room(short_by, ctx_.now, plan_.kv_ops) > 0;
}

bool ScheduleSession::ensure_kv(Request& r, int32_t tokens) {
  bool failed = false;
  while (!grow(r, tokens)) {
    if (make_room_for(r, tokens)) continue;  // cached conversations give way before running requests
    if (!failed) ++plan_.allocation_failures;
    failed = true;
    if (!give_way_for(r, tokens)) return false;
  }
  return true;
}

bool ScheduleSession::give_way_for(Request& r, int32_t tokens) {
  Request& victim = victims_.choose(q_.running, r);
  const bool supervised = &victim == &r && supervisor_ && r.reserved_tokens > 0 && tokens > r.reserved_tokens;
  preempt(victim);
  if (supervised) {
    ++r.scheduling.supervisor_preemptions;
    plan_.preemptions.back().outgrew_reservation = true;
  }
  return &victim != &r;
}

bool ScheduleSession::supervise(Request& r, int32_t tokens) {
  while (!supervisor_ || !supervisor_->extend(ctx_.kv, r, tokens))
    if (!give_way_for(r, tokens)) return false;
  ++plan_.reservation_growths;
  return true;
}

int32_t ScheduleSession::tokens_that_fit(const Request& r, int32_t want) const {
  const KvManager& kv = ctx_.kv;
  if (kv.blocks_needed(r.id, r.num_computed_tokens + want) <= kv.usage().available()) return want;
  // Blocks r may take: its own unused reservation plus the available pool.
  const int32_t have = kv.table(r.id).logical_blocks() * kv.config().block_size;
  const int32_t own_unused = std::max(0, kv.table(r.id).reserved - kv.table(r.id).num_device);
  const int32_t coverable = have + kv.config().tokens_for(own_unused + kv.usage().available());
  return std::clamp(coverable - r.num_computed_tokens, 0, want);
}

int32_t ScheduleSession::free_or_cached_blocks() const {
  return ctx_.kv.usage().available() + (cache_ ? cache_->blocks(KvTier::Device) : 0);
}

int32_t ScheduleSession::available_for_admission() const {
  int32_t avail = ctx_.kv.usage().available();
  if (q_.running.empty()) return avail;
  return avail - static_cast<int32_t>(limits_.watermark * ctx_.kv.usage().device.total);
}

int32_t ScheduleSession::admission_room() const {
  return available_for_admission() + (cache_ ? cache_->blocks(KvTier::Device) : 0);
}

int32_t ScheduleSession::reservation_tokens(const Request& r) const {
  int32_t tokens = allocation_.reservation_tokens(r);
  if (r.scheduling.min_reservation_tokens > tokens)
    tokens = std::min(r.scheduling.min_reservation_tokens, r.prompt_len() + r.sampling.max_tokens);
  return tokens;
}

int32_t ScheduleSession::admission_tokens(const Request& r) const {
  return std::max(reservation_tokens(r), std::min(allocation_.admission_tokens(r), r.prompt_len() + r.sampling.max_tokens));
}

int32_t ScheduleSession::admission_blocks(const Request& r, int32_t n) const {
  const KvManager& kv = ctx_.kv;
  int32_t reserve = kv.blocks_for(r.id, admission_tokens(r));
  int32_t covered = kv.blocks_for(r.id, r.num_computed_tokens + n);
  if (r.state != RequestState::Swapped) return std::max(reserve, covered);
  // A swapped request holds no device blocks: everything it needs comes from the
  // available pool.
  int32_t grow = std::max(0, kv.config().blocks_for(r.num_computed_tokens + n) - kv.table(r.id).entries());
  return std::max(reserve, kv.table(r.id).num_host + grow);
}

void ScheduleSession::take_in(Request& r, RequestQueue& from, int32_t reserve_tokens, int32_t n) {
  KvManager& kv = ctx_.kv;
  const bool swapped = r.state == RequestState::Swapped;
  if (!kv.reserve(r.id, kv.blocks_for(r.id, reserve_tokens)) || (swapped && !kv.swap_in(r.id, plan_.kv_ops)) ||
      !kv.allocate(r.id, r.num_computed_tokens + n))
    throw std::logic_error(fmt::format("kv: request {} did not get the blocks its admission counted on", r.id));
  r.reserved_tokens = reserve_tokens;
  from.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  if (swapped && r.num_dropped_leading > 0) push_chunk(r, 0, r.num_dropped_leading);  // preempted before it ran
  add_chunk(r, n);
}

bool ScheduleSession::admit(Request& r, int32_t n) {
  KvManager& kv = ctx_.kv;
  if (kv.table(r.id).num_device != 0 || kv.table(r.id).reserved != 0)
    throw std::logic_error(fmt::format("waiting request {} holds KV", r.id));
  if (cache_)
    if (auto m = cache_->match(r.tenant, r.conversation, r.prompt_tokens)) return admit_cached(r, n, *m);
  const int32_t need = admission_blocks(r, n);
  make_room(need - available_for_admission());
  if (need > available_for_admission()) return false;
  if (cache_) note_lookup(r, 0);
  take_in(r, q_.waiting, reservation_tokens(r), n);
  return true;
}

// The cache's hit-rate and recomputation counters see each request once: a request
// preempted by recompute and admitted again is not a new lookup.
void ScheduleSession::note_lookup(Request& r, int32_t reused_tokens) {
  if (r.scheduling.cache_lookup_counted) return;
  r.scheduling.cache_lookup_counted = true;
  r.cached_prompt_tokens = reused_tokens;
  cache_->note_lookup(r.prompt_len(), r.conversation_history_len, reused_tokens);
}

bool ScheduleSession::admit_cached(Request& r, int32_t n, CacheMatch m) {
  KvManager& kv = ctx_.kv;
  ConversationCache& cache = *cache_;
  // The recomputed range shares the chunk's token budget; at least one new token runs.
  const int32_t fresh = std::clamp(n - m.dropped_tokens, 1, r.num_tokens() - m.tokens);
  const int32_t restored = kv.config().blocks_for(m.tokens);
  const int32_t reserve_tokens = reservation_tokens(r);
  const int32_t admission = kv.config().blocks_for(admission_tokens(r));
  const int32_t grow = std::max(0, std::max(admission, kv.config().blocks_for(m.tokens + fresh)) - restored);
  auto fits = [&] {
    const int32_t need = cache.attach_blocks_needed(m) + grow;
    make_room(need - available_for_admission(), m.owner);
    return need <= available_for_admission();
  };
  // Sharing an anonymous entry copies its partial last block and keeps its tail;
  // taking it whole costs neither, so a request sharing cannot afford still fits.
  if (!fits()) {
    if (m.exclusive) return false;
    m.exclusive = true;
    if (!fits()) return false;
  }
  auto attached = cache.attach(m, r.id, plan_.kv_ops, ctx_.now);
  // The reservation counts without the sliding-window blocks the prefix came trimmed with.
  if (!attached || !kv.reserve(r.id, kv.blocks_for(r.id, reserve_tokens)) || !kv.allocate(r.id, m.tokens + fresh))
    throw std::logic_error(fmt::format("request {}: restoring its cached KV failed after the room check", r.id));
  r.num_computed_tokens = attached->computed_tokens;
  r.num_dropped_leading = attached->dropped_tokens;
  r.conversation_history_len = std::max(r.conversation_history_len, std::min(attached->history_tokens, r.prompt_len()));
  note_lookup(r, attached->computed_tokens - attached->dropped_tokens);
  r.reserved_tokens = reserve_tokens;
  q_.waiting.erase(r.id);
  r.state = RequestState::Running;
  q_.running.insert(r, Scheduler::arrival_key(r));
  if (r.num_dropped_leading > 0) push_chunk(r, 0, r.num_dropped_leading);
  add_chunk(r, fresh);
  return true;
}

bool ScheduleSession::resume(Request& r, int32_t n) {
  const int32_t need = admission_blocks(r, n);
  make_room(need - available_for_admission());
  if (need > available_for_admission()) return false;
  take_in(r, q_.swapped, reservation_tokens(r), n);
  return true;
}

bool ScheduleSession::bring_in(Request& r, int32_t n) {
  return r.state == RequestState::Swapped ? resume(r, n) : admit(r, n);
}

StepPlan ScheduleSession::finish() {
  add_drafts();
  if (cache_) {
    cache_->expire(ctx_.now);
    cache_->maintain(ctx_.now, plan_.kv_ops);
  }
  std::erase_if(plan_.chunks, [](const ScheduledChunk& c) { return c.num_tokens == 0; });
  return std::move(plan_);
}

}  // namespace seer
