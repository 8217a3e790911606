#include "engine/executor_feed.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "kv/kv_manager.h"

namespace seer {

void ExecutorFeed::fill(StepPlan& plan, const RequestTable& requests, const KvManager& kv) {
  ++plans_;
  plan.finished = std::move(finished_);
  finished_.clear();
  for (const Preemption& p : plan.preemptions) {
    if (p.mode == PreemptionMode::Held) continue;
    if (auto it = sent_.find(p.request); it != sent_.end()) it->second.table.clear();  // as the executor does
  }
  for (const ScheduledChunk& c : plan.chunks) {
    const auto [it, is_new] = sent_.try_emplace(c.request);
    Sent& s = it->second;
    if (s.plan != plans_) {  // the request's first chunk in this plan
      const Request* r = requests.find(c.request);
      if (!r) {
        if (is_new) sent_.erase(it);
        throw std::logic_error(
            fmt::format("executor feed: the plan has a chunk of request {}, which is not live", c.request));
      }
      s.plan = plans_;
      send(s, is_new, *r, kv, plan);
    }
    if (c.num_draft > 0) {
      const Request& r = requests.get(c.request);
      if (static_cast<int32_t>(r.draft_tokens.size()) < c.num_draft)
        throw std::logic_error(fmt::format("executor feed: request {} verifies {} draft tokens but has {}", r.id,
                                           c.num_draft, r.draft_tokens.size()));
      plan.drafts.push_back({r.id, std::vector<int32_t>(r.draft_tokens.begin(), r.draft_tokens.begin() + c.num_draft)});
    }
    if (c.sample) ++s.tokens;  // the executor appends what it samples (accepted drafts: accepted())
  }
}

void ExecutorFeed::send(Sent& s, bool is_new, const Request& r, const KvManager& kv, StepPlan& plan) {
  const int32_t n = r.num_tokens();
  if (is_new) {
    plan.new_requests.push_back({r.id, r.prompt_tokens, r.output_tokens, r.sampling});
  } else if (n > s.tokens) {
    AppendedTokens a{r.id, {}};
    for (int32_t p = s.tokens; p < n; ++p) a.tokens.push_back(r.token_at(p));
    plan.appended_tokens.push_back(std::move(a));
  } else if (n < s.tokens) {
    throw std::logic_error(
        fmt::format("executor feed: request {} has {} tokens, the executor holds {}", r.id, n, s.tokens));
  }
  s.tokens = n;
  const std::vector<int32_t>& now = kv.table(r.id).device;
  const auto keep = static_cast<size_t>(std::mismatch(s.table.begin(), s.table.end(), now.begin(), now.end()).first -
                                        s.table.begin());
  if (keep == s.table.size() && keep == now.size()) return;
  plan.block_tables.push_back({r.id, static_cast<int32_t>(keep), std::vector<int32_t>(now.begin() + keep, now.end())});
  s.table = now;
}

void ExecutorFeed::accepted(RequestId id, int32_t n) {
  if (auto it = sent_.find(id); it != sent_.end()) it->second.tokens += n;
}

void ExecutorFeed::forget(RequestId id) {
  if (sent_.erase(id)) finished_.push_back(id);
}

}  // namespace seer
