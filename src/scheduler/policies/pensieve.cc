// `pensieve` and `pensieve-gpu`: unified batches with chunked prefill under a token
// budget; a new request joins FCFS while more than 10 % of device KV is free; when
// decodes run out of device KV the latest arrivals are suspended (swapped out and
// re-queued). The conversation cache itself (kv/conversation_cache.h) is built by
// whoever owns the KvManager (sim runner, serving stack), because PolicyInfo says
// the policy is stateful [Pensieve].
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/stall_free_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

namespace {

std::unique_ptr<Scheduler> make(const SchedulerConfig& c, const char* name, PreemptionMode suspend) {
  SchedulerParts parts;
  parts.allocation = make_allocation_rule(c.allocation.empty() ? "block" : c.allocation, c.padding_or());
  parts.ordering = make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
  parts.former = std::make_unique<StallFreeFormer>(resolve_token_budget(c));  // 2048 without an SLO
  parts.limits = SessionLimits{c.max_batch_size, std::max(c.watermark, kPensieveFreeKvForAdmission), suspend};
  return std::make_unique<ComposedScheduler>(name, std::move(parts));
}

}  // namespace

std::unique_ptr<Scheduler> make_pensieve_scheduler(const SchedulerConfig& c) {
  return make(c, "pensieve", PreemptionMode::Swap);
}

// No host tier: suspension falls back to recomputation.
std::unique_ptr<Scheduler> make_pensieve_gpu_scheduler(const SchedulerConfig& c) {
  return make(c, "pensieve-gpu", PreemptionMode::Recompute);
}

}  // namespace seer
