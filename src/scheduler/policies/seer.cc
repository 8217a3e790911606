// `seer`: the seeds' parts in one policy (docs/seer-policy.md).
//  * stall-free batching with chunked prefill under the token budget, derived from
//    --tbt-slo when given [Sarathi-Serve];
//  * a length predictor orders, it does not reserve: waiting requests are served
//    shortest predicted output first within 1 s windows of first-token deadline
//    (ShortestPredictedOrdering, parts/predicted_ordering.h), and every request
//    takes blocks on demand, with or without a prediction. Measured on the mixed
//    comparison (docs/results/mixed.md): reserving prompt + padded prediction at
//    decode start left half of each reservation empty and cost up to 17 % of SLO
//    goodput under KV pressure. `--allocation exact` restores those reservations
//    (staged at decode start, admission by the whole predicted need, the doubling
//    supervisor for the mispredicted, who give way themselves) [S3, EcoServe];
//  * admission while more than 10 % of device KV is free [Pensieve] (measured:
//    without it the mixed trace's SLO goodput under KV pressure is 11 % lower);
//  * admission by earliest first-token deadline (arrival + TTFT SLO; FCFS when
//    every request has the same SLO or none), the first key of EcoServe's
//    ordering (measured on the mixed trace under KV pressure: SLO goodput 4.250 ->
//    4.375 req/s without a predictor); without predictions the windows above
//    change nothing in this order;
//  * offload-free preemption: a request that gives way keeps its K/V on the device
//    (held) and resumes ahead of new arrivals [EcoServe];
//  * the conversation cache over device and host tiers, evicted by recompute cost,
//    with prefix reuse: PolicyInfo::caches_conversations (the registry) makes the
//    owner of the KvManager build it [Pensieve].
#include <algorithm>

#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/stall_free_former.h"
#include "scheduler/policies/presets.h"

namespace seer {

std::unique_ptr<Scheduler> make_seer_scheduler(const SchedulerConfig& c) {
  SchedulerParts parts;
  parts.allocation = make_exact_or_block_rule(c.allocation.empty() ? "block" : c.allocation, c.padding_or(),
                                              ExactAllocation::Staging::AtDecode);
  parts.ordering = make_ordering(c.ordering.empty() ? "deadline-spf" : c.ordering);
  parts.former = std::make_unique<StallFreeFormer>(resolve_token_budget(c));
  parts.limits =
      SessionLimits{c.max_batch_size, std::max(c.watermark, kPensieveFreeKvForAdmission), PreemptionMode::Held};
  parts.victim = std::make_unique<RequesterVictim>();
  parts.supervisor = std::make_unique<DoublingSupervisor>();
  return std::make_unique<ComposedScheduler>("seer", std::move(parts));
}

}  // namespace seer
