#pragma once
// Preemption [vLLM, EcoServe]: when a running request cannot get a block, the latest-arrived
// running request gives up its KV, either dropped (recompute: re-prefilled later,
// prompt and generated tokens alike) or copied to the host tier (swap).
#include <vector>

#include "kv/kv_manager.h"
#include "scheduler/step_plan.h"

namespace seer {

// Applies a preemption of `r` to the KV manager and to `r` (state, computed tokens,
// reservation, preemption count) and returns its record. Swap falls back to
// recompute when the host tier lacks room or nothing was computed yet. Held keeps
// the computed K/V on the device (state Held, reservation shrunk to the blocks
// held) and falls back to recompute when nothing was computed. Queues are the
// caller's business.
Preemption preempt_request(Request& r, PreemptionMode mode, KvManager& kv, std::vector<KvOp>& ops);

}  // namespace seer
