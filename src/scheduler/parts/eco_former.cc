#include "scheduler/parts/eco_former.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "scheduler/parts/eco_ordering.h"

namespace seer {

namespace {
constexpr int32_t kMaxBestFitMisses = 8;
}  // namespace

int32_t EcoAllocation::generation_tokens(const Request& r) const {
  const int32_t cap = r.prompt_len() + r.sampling.max_tokens;
  const auto padded = static_cast<int32_t>(std::ceil(GtGroups::remaining(r) * (1.0 + padding_)));
  return std::min(cap, r.num_tokens() + padded);
}

int32_t EcoAllocation::reservation_tokens(const Request& r) const {
  const bool prefill_left = r.num_computed_tokens + 1 < r.num_tokens();
  return prefill_left ? r.num_tokens() : generation_tokens(r);
}

EcoFormer::EcoFormer(const EcoServeSettings& settings, std::unique_ptr<KvPipelining> pipelining)
    : settings_(settings),
      allocation_(settings.padding),
      groups_(settings.groups, settings.deadline, settings.order),
      pipelining_(std::move(pipelining)) {
  if (settings_.token_budget <= 0) throw std::logic_error("ecoserve: token budget must be > 0");
  // Hosts find the GTs they can take by the ordered held keys.
  if (pipelining_ && !fits_best()) throw std::logic_error("ecoserve: KV pipelining needs the ordered groups");
}

const KvLoans* EcoFormer::loans() const { return pipelining_ ? &pipelining_->loans() : nullptr; }

RequestQueue& EcoFormer::held(ScheduleSession& s) const { return s.queues().named(kHeldQueue, RequestState::Held); }

int32_t EcoFormer::generation_blocks(const KvManager& kv, const Request& r) const {
  return kv.blocks_for(r.id, allocation_.generation_tokens(r));
}

int32_t EcoFormer::gt_room(ScheduleSession& s) const {
  const KvManager& kv = s.kv();
  const auto reserve = static_cast<int32_t>(settings_.pt_reserve * kv.usage().device.total);
  return s.free_or_cached_blocks() - std::max(0, reserve - pt_blocks_);
}

void EcoFormer::form(ScheduleSession& s) {
  ++calls_;
  if (pipelining_) pipelining_->settle(s);
  const bool admit = admission_due(s);
  pt_blocks_ = 0;
  run_running(s);
  resume_swapped(s);
  if (admit) {
    admit_held(s);
    if (pipelining_) lend_kv(s);
  }
  admit_prompts(s);
  ensure_progress(s);
  free_at_end_ = s.free_or_cached_blocks();
}

bool EcoFormer::admission_due(ScheduleSession& s) const {
  if (!settings_.admit_on_free || free_at_end_ < 0) return true;
  // The paper admits when a group completes or KV frees up; with no GT running no
  // group can complete, so the queue is not left waiting for one.
  return cohorts_.num_running() == 0 || s.free_or_cached_blocks() > free_at_end_;
}

void EcoFormer::started(Request& r, GtGroups::GroupId group) {
  r.scheduling.generation_task = true;
  cohorts_.join(r.id, {calls_, group.first, group.second});
}

void EcoFormer::run_running(ScheduleSession& s) {
  std::vector<Request*> running;
  running.reserve(s.queues().running.size());
  for (const auto& e : s.queues().running) running.push_back(e.request);
  for (Request* r : running) {
    if (r->state != RequestState::Running) continue;  // recalled by a host above
    if (r->num_tokens() - r->num_computed_tokens > 1)
      continue_prefill(s, *r);
    else
      run_decode(s, *r);
  }
}

void EcoFormer::continue_prefill(ScheduleSession& s, Request& r) {
  pt_blocks_ += s.kv().table(r.id).reserved;
  const int32_t n = std::min(r.num_tokens() - r.num_computed_tokens, budget_left(s));
  if (n <= 0) return;
  s.add_chunk_allocating(r, n);  // a prompt task runs within its reservation
}

void EcoFormer::run_decode(ScheduleSession& s, Request& r) {
  const KvManager& kv = s.kv();
  if (!r.scheduling.generation_task) {
    // Prefill done: the PT becomes a GT and waits, holding its prompt's K/V, for its
    // group (admitted below in the same call when KV allows).
    s.hold(r, held(s), groups_.join(r, s.context().now), /*preempted=*/false);
    return;
  }
  // The supervisor steps in past the reservation's tokens; the group's slack
  // (its blocks' rounding first) comes before it.
  if (settings_.group_slack && r.reserved_tokens > 0 && r.num_tokens() > r.reserved_tokens)
    (void)take_group_slack(s, r);
  // Within its promise a GT takes nothing from the available pool.
  const bool within = kv.blocks_needed(r.id, r.num_tokens()) == 0;
  if (within || (recall_loans(s, r) && kv.blocks_needed(r.id, r.num_tokens()) == 0) ||
      (settings_.group_slack && take_group_slack(s, r))) {
    s.add_chunk_allocating(r, 1);
    return;
  }
  // The slack is used up: the supervisor re-predicts and r gives way (held, in the
  // group of its new remaining length; parts/supervisor.h).
  if (s.supervise(r, r.num_tokens())) s.add_chunk_allocating(r, 1);  // within the grown reservation
}

QueueKey EcoFormer::place_held(const Request& r, double now) {
  cohorts_.leave(r.id);
  return groups_.join(r, now);
}

bool EcoFormer::take_group_slack(ScheduleSession& s, Request& r) {
  KvManager& kv = s.context().kv;
  const int32_t want = kv.blocks_needed(r.id, r.num_tokens());
  if (want <= 0) {
    r.reserved_tokens = std::max(r.reserved_tokens, kv.tokens_for(r.id, kv.table(r.id).reserved));
    return r.num_tokens() <= r.reserved_tokens;
  }
  std::vector<Request*> donors;
  for (RequestId id : cohorts_.others(r.id)) {
    Request* d = s.context().requests.find(id);
    if (!d || d->state != RequestState::Running) continue;
    // Loans move promise between a host and its guests; a donor in one keeps it.
    if (pipelining_ && (pipelining_->loans().loan_of(id) || !pipelining_->loans().hosted_by(id).empty())) continue;
    donors.push_back(d);
  }
  if (GtCohorts::take_slack(kv, r, want, donors) < want) return false;
  ++slack_uses_;
  return kv.blocks_needed(r.id, r.num_tokens()) == 0;
}

bool EcoFormer::recall_loans(ScheduleSession& s, Request& host) {
  if (!pipelining_) return false;
  bool recalled = false;
  for (RequestId hosted : pipelining_->loans().hosted_by(host.id)) {
    Request* h = s.context().requests.find(hosted);
    if (!h) continue;
    evict(s, *h, PreemptionMode::Swap);
    recalled = true;
  }
  return recalled;
}

void EcoFormer::evict(ScheduleSession& s, Request& r, PreemptionMode mode) {
  if (r.state == RequestState::Held) groups_.leave(r.id);
  cohorts_.leave(r.id);
  const RequestId host = pipelining_ ? pipelining_->host_of(r.id) : -1;
  s.preempt(r, mode);
  if (pipelining_) pipelining_->recall(s, r.id, host);
  if (r.state == RequestState::Waiting) r.scheduling.generation_task = false;  // recomputes as a PT
}

void EcoFormer::resume_swapped(ScheduleSession& s) {
  auto& swapped = s.queues().swapped;
  while (!swapped.empty() && !s.running_full()) {
    Request& r = swapped.front();
    const KvManager& kv = s.kv();
    const int32_t need = std::max(generation_blocks(kv, r), kv.table(r.id).num_host + 1);
    if (need > gt_room(s) || !s.resume(r, 1)) break;
    started(r, {-1, GtGroups::group_of(r)});
  }
}

void EcoFormer::admit_held(ScheduleSession& s) {
  RequestQueue& q = held(s);
  int32_t room = gt_room(s);
  auto it = q.begin();
  while (it != q.end() && !s.running_full()) {
    auto next = std::next(it);
    Request& r = *it->request;
    if (admit_one(s, r, room)) {
      it = next;
      continue;
    }
    // The group does not fit: it is split (its members that fit went in above)
    // and waits; with ordering, best fit fills the room left from later groups.
    if (fits_best()) fill_by_best_fit(s, it->key, room);
    return;
  }
}

void EcoFormer::fill_by_best_fit(ScheduleSession& s, const QueueKey& front, int32_t& room) {
  RequestQueue& q = held(s);
  auto after_front = [&] {
    auto from = q.begin();
    while (from != q.end() && (from->key == front || groups_.same_group(from->key, front))) ++from;
    return from;
  };
  for (auto from = after_front(); from != q.end() && !s.running_full(); from = after_front())
    if (!admit_best_fit(s, from, room)) return;
}

bool EcoFormer::admit_one(ScheduleSession& s, Request& r, int32_t& room) {
  const KvManager& kv = s.kv();
  const int32_t before = s.free_or_cached_blocks();
  if (!s.unhold(r, held(s), generation_blocks(kv, r), 1, room)) return false;
  started(r, groups_.leave(r.id));
  room -= before - s.free_or_cached_blocks();
  return true;
}

bool EcoFormer::admit_best_fit(ScheduleSession& s, RequestQueue::iterator from, int32_t& room) {
  // Largest remaining-length bucket whose padded reservation fits the room.
  RequestQueue& q = held(s);
  const KvManager& kv = s.kv();
  const double tokens = static_cast<double>(kv.config().tokens_for(std::max(room, 0))) / (1.0 + settings_.padding);
  auto it = best_fit(q, from, static_cast<int32_t>(tokens) / kLengthBucketTokens, settings_.order);
  for (int misses = 0; it != q.end() && misses < kMaxBestFitMisses; ++misses, ++it) {
    if (it->key.k[0] != from->key.k[0]) return false;
    Request& r = *it->request;
    if (admit_one(s, r, room)) return true;
  }
  return false;
}

void EcoFormer::admit_prompts(ScheduleSession& s) {
  auto& waiting = s.queues().waiting;
  const KvManager& kv = s.kv();
  const auto reserve = static_cast<int32_t>(settings_.pt_reserve * kv.usage().device.total);
  const bool gts_wait = !held(s).empty();
  while (!waiting.empty() && !s.running_full() && budget_left(s) > 0) {
    const int32_t left = budget_left(s);
    auto it = waiting.begin();
    if (fits_best() && it->request->num_tokens() > left) {
      auto fit = best_fit(waiting, it, left / kLengthBucketTokens);
      if (fit != waiting.end() && fit->request->num_tokens() <= left) it = fit;
    }
    Request& r = *it->request;
    const int32_t blocks = kv.blocks_for(r.id, r.num_tokens());
    // A PT starts when its GT will find KV after the prefill (its whole predicted
    // reservation fits beside the promises already made) or within the PT share;
    // otherwise prompts would fill the KV while their GTs wait. One may always run.
    const bool gt_will_fit = !gts_wait && kv.blocks_for(r.id, allocation_.generation_tokens(r)) <= gt_room(s);
    if (pt_blocks_ > 0 && !gt_will_fit && pt_blocks_ + blocks > reserve) break;
    if (!s.admit(r, std::min(r.num_tokens(), left))) break;
    pt_blocks_ += blocks;
  }
}

void EcoFormer::ensure_progress(ScheduleSession& s) {
  if (!s.plan_empty()) return;
  RequestQueue& q = held(s);
  const KvManager& kv = s.kv();
  if (q.empty()) {
    if (!s.queues().swapped.empty() && s.queues().running.empty()) {
      Request& r = s.queues().swapped.front();
      if (s.resume(r, 1)) started(r, {-1, GtGroups::group_of(r)});
    }
    return;
  }
  // Nothing runs and the front GT's reservation does not fit: it runs on what is
  // free, taking KV from the back of the queue (recompute) when not even one block is.
  Request& r = q.front();
  const int32_t one = kv.blocks_for(r.id, r.num_tokens()) - kv.table(r.id).num_device;
  (void)s.make_room_for(r, r.num_tokens());  // cached conversations first
  while (kv.usage().available() < one && q.size() > 1) evict(s, q.back(), PreemptionMode::Recompute);
  const int32_t avail = kv.usage().available();
  if (avail < one) return;
  const int32_t reserve = std::min(generation_blocks(kv, r), kv.table(r.id).num_device + avail);
  if (!s.unhold(r, q, reserve, 1, avail))
    throw std::logic_error(fmt::format("ecoserve: held request {} cannot run on {} free blocks", r.id, avail));
  started(r, groups_.leave(r.id));
}

void EcoFormer::on_remove(RequestId id) {
  groups_.leave(id);
  cohorts_.leave(id);
  if (pipelining_) pipelining_->on_remove(id);
}

void EcoFormer::lend_kv(ScheduleSession& s) {
  const KvManager& kv = s.kv();
  const KvPipelining::Hooks hooks{[&](const Request& r) { return generation_blocks(kv, r); },
                                  [&](Request& r) { started(r, groups_.leave(r.id)); }};
  pipelining_->lend(s, held(s), hooks);
}

void EcoFormer::check_invariants(const SchedulerQueues& queues, const KvManager& kv) const {
  if (pipelining_) pipelining_->check_invariants(kv);
  const auto* named = queues.find_named(kHeldQueue);
  cohorts_.check_invariants([&](RequestId id) {
    auto it = queues.running.find(id);
    return it != queues.running.end() && it->request->state == RequestState::Running;
  });
  if (named) groups_.check_invariants(named->queue);
  else if (groups_.num_members() != 0)
    throw std::logic_error("gt group invariant violated: group members but no held queue");
}

}  // namespace seer
