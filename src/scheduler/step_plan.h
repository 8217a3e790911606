#pragma once
// What one engine iteration does: the plain record the scheduler hands to the
// executor (compare vLLM v1's SchedulerOutput).
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
struct ScheduledChunk {
  RequestId request = -1;
  int32_t start = 0;
  int32_t num_tokens = 0;
  bool sample = false;
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

  bool empty() const { return chunks.empty() && kv_ops.empty(); }
  int32_t num_tokens() const {
    int32_t n = 0;
    for (const auto& c : chunks) n += c.num_tokens;
    return n;
  }
};

}  // namespace seer
