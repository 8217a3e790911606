#pragma once
// What one engine iteration does: the plain record the executor receives (compare
// vLLM v1's SchedulerOutput). The scheduler decides the chunks, KV operations and
// preemptions; the engine (engine/executor_feed.h) adds what the executor needs to
// carry them out on its own copy of each request: new requests' payloads, tokens it
// did not sample, block-table changes and the ids that left. An executor reads
// nothing else (docs/architecture.md §2).
#include <cstdint>
#include <vector>

#include "kv/kv_types.h"
#include "scheduler/request.h"

namespace seer {

// Tokens [start, start + num_tokens) of the request's sequence are computed this
// iteration. If `sample` is set, the logits of the last of them are sampled to
// produce the request's next output token (only when start + num_tokens ==
// num_tokens()). A request may appear twice with disjoint ranges (Pensieve's
// recomputation of dropped leading tokens plus its new prompt).
// Speculative decoding: a sampled chunk may end in `num_draft` draft tokens (the
// request's Request::draft_tokens, past its num_tokens(); counted in num_tokens).
// Logits are then sampled at each of the chunk's last 1 + num_draft positions in
// turn: a draft is accepted while it equals the token sampled before it, and the
// first token sampled that differs (or follows the last draft) ends the chunk's
// output (docs/speculative.md).
struct ScheduledChunk {
  RequestId request = -1;
  int32_t start = 0;
  int32_t num_tokens = 0;
  bool sample = false;
  int32_t num_draft = 0;
  // Tokens of the request's sequence the chunk computes (the drafts are not).
  int32_t sequence_end() const { return start + num_tokens - num_draft; }
};

// Held: the request pauses and keeps its device KV (offload-free) [EcoServe].
enum class PreemptionMode { Recompute, Swap, Held };

struct Preemption {
  RequestId request = -1;
  PreemptionMode mode = PreemptionMode::Recompute;
  int32_t lost_tokens = 0;     // Recompute: computed tokens whose K/V were dropped
  int32_t swapped_blocks = 0;  // Swap: device blocks copied to the host tier
  // The supervisor [S3] preempted the request because its grown reservation did not fit.
  bool outgrew_reservation = false;
};

// A request the executor has not seen yet: all it needs to compute and sample it.
struct NewRequestData {
  RequestId request = -1;
  std::vector<int32_t> prompt_tokens;
  // Output tokens the request already has (none for a request the engine just
  // admitted); the sampler counts them as output.
  std::vector<int32_t> output_tokens;
  SamplingParams sampling;
};

// The request's device block table becomes its first `keep` entries followed by
// `blocks`: keep == the old length appends (a growing sequence); keep == 0 replaces
// it (rebuilt by a resume after preemption, a swap-in, Pensieve's recomputed leading
// blocks or a prefix reused from the cache). Entries are device block ids, -1 for a
// logical block on no device block.
struct BlockTableUpdate {
  RequestId request = -1;
  int32_t keep = 0;
  std::vector<int32_t> blocks;
};

// Tokens that joined the request's sequence without being sampled by the executor;
// also the draft tokens a chunk verifies (StepPlan::drafts).
struct AppendedTokens {
  RequestId request = -1;
  std::vector<int32_t> tokens;
};

struct StepPlan {
  std::vector<ScheduledChunk> chunks;
  // Executed before the forward pass, in order.
  std::vector<KvOp> kv_ops;
  // Requests preempted while forming this plan (already reflected in the KV manager).
  std::vector<Preemption> preemptions;
  // Times a request needed more device blocks than were free while forming this
  // plan (each such event ends in a preemption or a request left out).
  int32_t allocation_failures = 0;
  // Reservations the supervisor [S3] grew while forming this plan.
  int32_t reservation_growths = 0;

  // ---- For the executor, filled by the engine (ExecutorFeed); applied in this
  // order before the KV operations. Each sampled chunk's token becomes its
  // request's next token on the executor's side as well.
  // Requests that left the engine (finished or aborted) since the last plan.
  std::vector<RequestId> finished;
  std::vector<NewRequestData> new_requests;
  std::vector<AppendedTokens> appended_tokens;
  // The draft tokens of each chunk with num_draft > 0 (exactly num_draft of them).
  std::vector<AppendedTokens> drafts;
  // Then `preemptions`: a Recompute or Swap victim's block table is dropped (its
  // blocks are gone or moved); the plan that resumes it sends the table whole.
  // Last, the tables of requests with chunks that changed since the executor last saw them.
  std::vector<BlockTableUpdate> block_tables;

  bool empty() const { return chunks.empty() && kv_ops.empty(); }
  int32_t num_tokens() const {
    int32_t n = 0;
    for (const auto& c : chunks) n += c.num_tokens;
    return n;
  }
  int32_t num_draft_tokens() const {
    int32_t n = 0;
    for (const auto& c : chunks) n += c.num_draft;
    return n;
  }
};

}  // namespace seer
