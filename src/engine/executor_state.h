#pragma once
// The executor's own copy of the requests it computes (docs/architecture.md §2),
// kept from StepPlans alone: tokens, sampling parameters and device block table per
// request. ModelExecutor builds its batches from it; nothing on the executor's side
// reads the scheduler's RequestTable or the KvManager.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kv/kv_manager.h"
#include "scheduler/step_plan.h"

namespace seer {

struct ExecutorRequest {
  std::vector<int32_t> prompt;
  std::vector<int32_t> output;
  SamplingParams sampling;
  std::vector<int32_t> block_table;  // device block per table entry (KvTable), < 0: none
  std::vector<int32_t> draft;        // the current plan's draft tokens (StepPlan::drafts)

  int32_t num_tokens() const { return static_cast<int32_t>(prompt.size() + output.size()); }
  // Positions past num_tokens() are the current plan's draft tokens.
  int32_t token_at(int32_t pos) const {
    const auto p = static_cast<size_t>(pos);
    if (p < prompt.size()) return prompt[p];
    const size_t o = p - prompt.size();
    return o < output.size() ? output[o] : draft[o - output.size()];
  }
};

class ExecutorState {
 public:
  // The block tables' layout: block size and layer groups (kv/kv_layer_groups.h).
  explicit ExecutorState(const KvConfig& layout);
  explicit ExecutorState(int32_t block_size) : ExecutorState(KvConfig{.block_size = block_size}) {}

  // Applies the plan's updates (finished, new requests, appended tokens, preemptions,
  // block tables, drafts; step_plan.h; a finished id it does not hold is ignored) and checks every chunk against the result: its
  // request is known, [start, start + num_tokens) lies within the request's tokens
  // and its drafts, a sampled chunk ends at its last token (before its drafts),
  // drafts come only with a sampled chunk and as many as it names, and the block table has a device block
  // for every position up to the chunk's end. Throws seer::Error naming the request
  // and the inconsistency otherwise.
  void apply(const StepPlan& plan);
  // The executor sampled `token` for request `id`: its next output token.
  void append_sampled(RequestId id, int32_t token);

  // Throws seer::Error for an unknown id.
  const ExecutorRequest& get(RequestId id) const;
  bool contains(RequestId id) const { return requests_.count(id) != 0; }
  size_t size() const { return requests_.size(); }

 private:
  ExecutorRequest& known(RequestId id, const char* what);
  void update_table(const BlockTableUpdate& u);
  void check(const ScheduledChunk& c) const;

  KvConfig layout_;
  std::unordered_map<RequestId, ExecutorRequest> requests_;
};

}  // namespace seer
