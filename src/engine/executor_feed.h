#pragma once
// The one place that turns the scheduler's plan into the executor's whole input
// (docs/architecture.md §2). The engine keeps, per request it has sent to the
// executor, how many tokens the executor holds and the block table it was last
// sent; fill() adds to a plan only what changed since: new requests' payloads,
// tokens the executor did not sample, block-table diffs and the ids that left
// (compare vLLM v1's NewRequestData / CachedRequestData / finished_req_ids).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "scheduler/request_table.h"
#include "scheduler/step_plan.h"

namespace seer {

class KvManager;

class ExecutorFeed {
 public:
  // Fills plan.finished, new_requests, appended_tokens and block_tables for the
  // plan's chunks, reading their requests and device block tables, and drafts for
  // the chunks that verify some; then counts each
  // sampled chunk's token as held by the executor (it appends what it samples).
  // Throws std::logic_error when a chunk's request is not live or holds fewer
  // tokens than the executor does.
  void fill(StepPlan& plan, const RequestTable& requests, const KvManager& kv);
  // The executor accepted n draft tokens of request `id` in the plan last filled
  // (it appended them before the token it sampled after them).
  void accepted(RequestId id, int32_t n);
  // The request left the engine: the next plan filled tells the executor.
  void forget(RequestId id);
  // Requests the executor holds as far as the feed knows.
  size_t size() const { return sent_.size(); }

 private:
  struct Sent {
    int32_t tokens = 0;          // tokens the executor holds
    std::vector<int32_t> table;  // the block table it holds
    uint64_t plan = 0;           // the last plan that sent this request
  };
  void send(Sent& s, bool is_new, const Request& r, const KvManager& kv, StepPlan& plan);

  std::unordered_map<RequestId, Sent> sent_;
  std::vector<RequestId> finished_;
  uint64_t plans_ = 0;
};

}  // namespace seer
