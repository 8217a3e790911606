#include "scheduler/parts/eco_pipelining.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "scheduler/parts/eco_ordering.h"
#include "scheduler/parts/gt_groups.h"

namespace seer {

namespace {
constexpr int32_t kMaxHostedMisses = 8;
// Lending stops after this many hosts in a row (longest first) found no GT to host:
// shorter hosts can take only shorter GTs.
constexpr int32_t kMaxIdleHosts = 4;

bool running(ScheduleSession& s, RequestId id) {
  const Request* r = s.context().requests.find(id);
  return r && r->state == RequestState::Running;
}
}  // namespace

void KvPipelining::settle(ScheduleSession& s) {
  s.settle_returned(loans_, [&](RequestId id) { return running(s, id); });
}

RequestId KvPipelining::host_of(RequestId hosted) const {
  const auto* loan = loans_.loan_of(hosted);
  return loan ? loan->host : -1;
}

void KvPipelining::recall(ScheduleSession& s, RequestId id, RequestId host) {
  s.recall(loans_, id, host >= 0 && running(s, host));
}

// A running GT (host) lends when a held GT's remaining length l < (host remaining)
// / 2 - b x (host predicted): the host will not touch the blocks past its first half
// while the hosted GT runs.
double KvPipelining::max_hosted_len(const Request& h) const {
  if (!h.scheduling.generation_task || h.num_tokens() - h.num_computed_tokens > 1) return 0;
  const double predicted = h.predicted_output_len.value_or(h.sampling.max_tokens);
  return GtGroups::remaining(h) / 2.0 - buffer_ * predicted;
}

void KvPipelining::lend(ScheduleSession& s, RequestQueue& held, const Hooks& hooks) {
  if (held.empty()) return;
  const KvManager& kv = s.kv();
  std::vector<std::pair<double, Request*>> hosts;
  for (const auto& e : s.queues().running) {
    Request& h = *e.request;
    const double max_len = max_hosted_len(h);
    if (max_len > 1) hosts.emplace_back(max_len, &h);
  }
  // Lends what `host` can to the GTs that qualify; `hosted` sees each one admitted.
  const auto serve = [&](Request& host, double max_len, const std::function<void(Request&)>& hosted) {
    bool lent = false;
    for (int32_t blocks = lendable_blocks(kv, host); blocks > 0; blocks = lendable_blocks(kv, host)) {
      Request* r = find_hosted(s, held, max_len, blocks, hooks);
      if (!r || s.running_full()) break;
      const int32_t need = hooks.generation_blocks(*r) - kv.table(r->id).num_device;
      if (!s.lend(loans_, host.id, r->id, need)) break;
      if (!s.unhold(*r, held, hooks.generation_blocks(*r), 1, 0))
        throw std::logic_error(fmt::format("ecoserve: request {} did not get the KV it borrowed", r->id));
      hooks.admitted(*r);
      hosted(*r);
      lent = true;
    }
    return lent;
  };
  if (!nest_now_) {
    // Longest first; a GT hosted here hosts from the next call on.
    std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    int32_t idle = 0;
    for (auto& [max_len, host] : hosts) {
      if (held.empty() || s.running_full() || idle >= kMaxIdleHosts) return;
      idle = serve(*host, max_len, [](Request&) {}) ? 0 : idle + 1;
    }
    return;
  }
  // Nesting dolls: a max-heap on the bound, longest first; a GT hosted here joins
  // it and lends its own second half in this call (its bound is below its host's).
  const auto shorter = [](const auto& a, const auto& b) {
    return a.first < b.first || (a.first == b.first && a.second->id > b.second->id);
  };
  std::make_heap(hosts.begin(), hosts.end(), shorter);
  while (!hosts.empty() && !held.empty() && !s.running_full()) {
    std::pop_heap(hosts.begin(), hosts.end(), shorter);
    const auto [max_len, host] = hosts.back();
    hosts.pop_back();
    (void)serve(*host, max_len, [&](Request& r) {
      const double nested = max_hosted_len(r);
      if (nested <= 1) return;
      hosts.emplace_back(nested, &r);
      std::push_heap(hosts.begin(), hosts.end(), shorter);
    });
  }
}

Request* KvPipelining::scan_class(ScheduleSession& s, RequestQueue& held, RequestQueue::iterator it, double cls,
                                  double max_len, int32_t blocks, const Hooks& hooks) const {
  const KvManager& kv = s.kv();
  for (int misses = 0; it != held.end() && it->key.k[0] == cls && (nest_now_ || misses < kMaxHostedMisses);
       ++it, ++misses) {
    Request& r = *it->request;
    if (GtGroups::remaining(r) < max_len && hooks.generation_blocks(r) - kv.table(r.id).num_device <= blocks)
      return &r;
  }
  return nullptr;
}

// The longest held GT, loosest deadline first, shorter than `max_len` tokens whose
// reservation fits `blocks`; nullptr when none.
Request* KvPipelining::find_hosted(ScheduleSession& s, RequestQueue& held, double max_len, int32_t blocks,
                                   const Hooks& hooks) const {
  // max_len's own length bucket holds shorter and longer GTs, the buckets below it
  // only shorter ones.
  const int32_t top = length_bucket(static_cast<int32_t>(std::ceil(max_len)));
  const auto probe = [](double cls, double second, double third) {
    return QueueKey{{cls, second, third}, std::numeric_limits<RequestId>::min()};
  };
  constexpr double kFirst = -std::numeric_limits<double>::infinity();
  for (int32_t c : GtGroups::ordered_classes_loosest_first()) {
    const double cls = c;
    Request* r = nullptr;
    if (order_ == HeldOrder::KvFirst) {
      // Each occupied-KV sub-class is ordered by length: start at its bucket `top`.
      for (auto sub = held.lower_bound(probe(cls, kFirst, kFirst)); !r && sub != held.end() && sub->key.k[0] == cls;
           sub = next_subclass(held, sub)) {
        auto from = held.lower_bound(probe(cls, sub->key.k[1], -double(top)));
        if (from == held.end() || from->key.k[0] != cls || from->key.k[1] != sub->key.k[1]) continue;
        r = scan_class(s, held, from, cls, max_len, blocks, hooks);
        // Capped: only this sub-class's first entries (the scan may run into the next).
        if (r && !nest_now_ && held.find(r->id)->key.k[1] != sub->key.k[1]) r = nullptr;
      }
    } else if (nest_now_) {
      r = scan_class(s, held, held.lower_bound(probe(cls, -double(top), kFirst)), cls, max_len, blocks, hooks);
    } else {
      for (int32_t bucket = top; !r && bucket >= std::max(1, top - 1); --bucket)
        r = scan_class(s, held, held.lower_bound(probe(cls, -double(bucket), kFirst)), cls, max_len, blocks, hooks);
    }
    if (r) return r;
  }
  return nullptr;
}

int32_t KvPipelining::lendable_blocks(const KvManager& kv, const Request& host) {
  const int32_t keep = kv.blocks_for(host.id, host.num_tokens() + (GtGroups::remaining(host) + 1) / 2);
  return kv.table(host.id).reserved - std::max(keep, kv.table(host.id).num_device);
}

}  // namespace seer
