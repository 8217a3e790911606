#include "engine/executor_state.h"

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

ExecutorState::ExecutorState(const KvConfig& layout) : layout_(layout) {
  if (layout_.block_size <= 0) fail("executor state: block size must be > 0 (got {})", layout_.block_size);
  if (layout_.groups <= 0) fail("executor state: {} layer groups", layout_.groups);
}

ExecutorRequest& ExecutorState::known(RequestId id, const char* what) {
  auto it = requests_.find(id);
  if (it == requests_.end()) fail("plan: {} for unknown request {} (never sent, or finished)", what, id);
  return it->second;
}

const ExecutorRequest& ExecutorState::get(RequestId id) const {
  auto it = requests_.find(id);
  if (it == requests_.end()) fail("executor state: unknown request {}", id);
  return it->second;
}

void ExecutorState::apply(const StepPlan& plan) {
  // An id the executor never got is not an error: after a failed step the engine
  // ends every request it had sent, whether or not that plan arrived.
  for (RequestId id : plan.finished) requests_.erase(id);
  for (const NewRequestData& n : plan.new_requests) {
    if (n.prompt_tokens.empty()) fail("plan: new request {} has an empty prompt", n.request);
    auto [it, inserted] = requests_.try_emplace(n.request);
    if (!inserted) fail("plan: new request {} is already known", n.request);
    it->second.prompt = n.prompt_tokens;
    it->second.output = n.output_tokens;
    it->second.sampling = n.sampling;
  }
  for (const AppendedTokens& a : plan.appended_tokens) {
    ExecutorRequest& r = known(a.request, "appended tokens");
    r.output.insert(r.output.end(), a.tokens.begin(), a.tokens.end());
  }
  for (const Preemption& p : plan.preemptions) {
    if (p.mode == PreemptionMode::Held) continue;  // keeps its device blocks
    auto it = requests_.find(p.request);
    if (it != requests_.end()) it->second.block_table.clear();
  }
  for (const BlockTableUpdate& u : plan.block_tables) update_table(u);
  for (auto& [id, r] : requests_) r.draft.clear();
  for (const AppendedTokens& d : plan.drafts) {
    ExecutorRequest& r = known(d.request, "draft tokens");
    if (!r.draft.empty()) fail("plan: request {} has draft tokens twice", d.request);
    if (d.tokens.empty()) fail("plan: request {} has an empty draft", d.request);
    r.draft = d.tokens;
  }
  for (const ScheduledChunk& c : plan.chunks) check(c);
}

void ExecutorState::update_table(const BlockTableUpdate& u) {
  std::vector<int32_t>& table = known(u.request, "a block-table update").block_table;
  if (u.keep < 0 || static_cast<size_t>(u.keep) > table.size())
    fail("plan: block-table update of request {} keeps {} blocks of its {}", u.request, u.keep, table.size());
  table.resize(static_cast<size_t>(u.keep));
  table.insert(table.end(), u.blocks.begin(), u.blocks.end());
}

void ExecutorState::check(const ScheduledChunk& c) const {
  auto it = requests_.find(c.request);
  if (it == requests_.end()) fail("plan: chunk of unknown request {} (never sent, or finished)", c.request);
  const ExecutorRequest& r = it->second;
  const int32_t end = c.start + c.num_tokens;
  if (c.num_draft < 0 || (c.num_draft > 0 && !c.sample))
    fail("plan: chunk [{}, {}) of request {} has {} draft tokens (only a sampled chunk may have any)", c.start, end,
         c.request, c.num_draft);
  if (c.num_draft != static_cast<int32_t>(r.draft.size()) && (c.num_draft > 0 || c.sample))
    fail("plan: chunk [{}, {}) of request {} names {} draft tokens, the plan sends {}", c.start, end, c.request,
         c.num_draft, r.draft.size());
  if (c.num_tokens <= c.num_draft || c.start < 0 || c.sequence_end() > r.num_tokens())
    fail("plan: chunk [{}, {}) of request {} is outside its {} tokens", c.start, end, c.request, r.num_tokens());
  if (c.sample && c.sequence_end() != r.num_tokens())
    fail("plan: request {} samples after token {} but has {} tokens", c.request, c.sequence_end(), r.num_tokens());
  // Attention reads every position before `end` (sliding-window layers those in the
  // first query's window on): each needs a device block.
  const auto needed = static_cast<size_t>(layout_.blocks_for(end));
  if (r.block_table.size() < needed)
    fail("plan: chunk [{}, {}) of request {} needs {} blocks, its block table has {}", c.start, end, c.request,
         needed, r.block_table.size());
  const auto groups = static_cast<size_t>(layout_.groups);
  const auto windowed = static_cast<size_t>(layout_.first_attended_block(c.start));
  for (size_t j = 0; j < needed; ++j)
    if (r.block_table[j] < 0 && !(layout_.local(static_cast<int32_t>(j % groups)) && j / groups < windowed))
      fail("plan: chunk [{}, {}) of request {} reads logical block {}{}, which has no device block", c.start, end,
           c.request, j / groups, groups > 1 ? fmt::format(" (layer group {})", j % groups) : "");
}

void ExecutorState::append_sampled(RequestId id, int32_t token) {
  known(id, "a sampled token").output.push_back(token);
}

}  // namespace seer
