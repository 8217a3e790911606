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
void KvPipelining::lend(ScheduleSession& s, RequestQueue& held, const Hooks& hooks) {
  if (held.empty()) return;
  const KvManager& kv = s.kv();
  std::vector<std::pair<double, Request*>> hosts;
  for (const auto& e : s.queues().running) {
    Request& h = *e.request;
    if (!h.scheduling.generation_task || h.num_tokens() - h.num_computed_tokens > 1) continue;
    const double predicted = h.predicted_output_len.value_or(h.sampling.max_tokens);
    const double max_len = GtGroups::remaining(h) / 2.0 - buffer_ * predicted;
    if (max_len > 1) hosts.emplace_back(max_len, &h);
  }
  std::sort(hosts.begin(), hosts.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  int32_t idle = 0;
  for (auto& [max_len, host] : hosts) {
    if (held.empty() || s.running_full() || idle >= kMaxIdleHosts) return;
    bool lent = false;
    for (int32_t blocks = lendable_blocks(kv, *host); blocks > 0; blocks = lendable_blocks(kv, *host)) {
      Request* r = find_hosted(s, held, max_len, blocks, hooks);
      if (!r || s.running_full()) break;
      const int32_t need = hooks.generation_blocks(*r) - kv.table(r->id).num_device;
      if (!s.lend(loans_, host->id, r->id, need)) break;
      if (!s.unhold(*r, held, hooks.generation_blocks(*r), 1, 0))
        throw std::logic_error(fmt::format("ecoserve: request {} did not get the KV it borrowed", r->id));
      hooks.admitted(*r);
      lent = true;
    }
    idle = lent ? 0 : idle + 1;
  }
}

// The longest held GT, loosest deadline first, shorter than `max_len` tokens whose
// reservation fits `blocks`; nullptr when none.
Request* KvPipelining::find_hosted(ScheduleSession& s, RequestQueue& held, double max_len, int32_t blocks,
                                   const Hooks& hooks) const {
  const KvManager& kv = s.kv();
  // max_len's own length bucket holds shorter and longer GTs (checked one by one, a
  // few), the buckets below it only shorter ones.
  const int32_t top = length_bucket(static_cast<int32_t>(std::ceil(max_len)));
  for (int32_t cls : GtGroups::ordered_classes_loosest_first()) {
    for (int32_t bucket = top; bucket >= std::max(1, top - 1); --bucket) {
      const QueueKey probe{{double(cls), -double(bucket), -std::numeric_limits<double>::infinity()},
                           std::numeric_limits<RequestId>::min()};
      auto it = held.lower_bound(probe);
      for (int misses = 0; it != held.end() && it->key.k[0] == cls && misses < kMaxHostedMisses; ++it, ++misses) {
        Request& r = *it->request;
        if (GtGroups::remaining(r) < max_len && hooks.generation_blocks(r) - kv.table(r.id).num_device <= blocks)
          return &r;
      }
    }
  }
  return nullptr;
}

int32_t KvPipelining::lendable_blocks(const KvManager& kv, const Request& host) {
  const int32_t keep = kv.config().blocks_for(host.num_tokens() + (GtGroups::remaining(host) + 1) / 2);
  return kv.table(host.id).reserved - std::max(keep, kv.table(host.id).num_device);
}

}  // namespace seer
