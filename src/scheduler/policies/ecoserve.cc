// `ecoserve` and its ablation variants [EcoServe]: decoupled prompt and generation
// queues (D), time-synced generation groups (S), bucketed ordering with best fit
// (O), KV pipelining (full). One table; each variant is a configuration of the
// same parts (docs/ecoserve.md).
#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/eco_former.h"
#include "scheduler/parts/eco_ordering.h"
#include "common/error.h"
#include "scheduler/policies/presets.h"

namespace seer {

namespace {

// Each variant adds one part: D decouples the queues (held GTs in arrival order),
// S groups them in time-synced groups, O orders the groups and fits best, and the
// full system adds KV pipelining.
struct EcoVariant {
  const char* name;
  GroupMode groups;
  bool kv_pipelining;
};

constexpr EcoVariant kVariants[] = {
    {"ecoserve-d", GroupMode::Fcfs, false},
    {"ecoserve-sd", GroupMode::TimeSynced, false},
    {"ecoserve-sdo", GroupMode::Ordered, false},
    {"ecoserve", GroupMode::Ordered, true},
};

// EcoServe pads chat-like workloads by 15 % unless told otherwise.
constexpr double kEcoPadding = 0.15;

}  // namespace

std::unique_ptr<Scheduler> make_ecoserve_scheduler(const SchedulerConfig& c, std::string_view variant) {
  for (const EcoVariant& v : kVariants) {
    if (variant != v.name) continue;
    EcoServeSettings s;
    s.groups = v.groups;
    s.token_budget = resolve_token_budget(c);
    s.pt_reserve = c.pt_reserve;
    s.padding = c.padding_or(kEcoPadding);
    s.deadline = c.eco_deadline == "time-left" ? DeadlineClass::TimeLeft : DeadlineClass::Relative;
    s.order = c.eco_order == "kv-first" ? HeldOrder::KvFirst : HeldOrder::LengthFirst;
    s.admit_on_free = c.eco_admission == "on-free";
    s.group_slack = c.eco_overrun == "group-slack";
    SchedulerParts parts;
    parts.allocation = std::make_unique<EcoAllocation>(s.padding);
    parts.ordering = v.groups == GroupMode::Ordered ? std::unique_ptr<Ordering>(std::make_unique<EcoOrdering>())
                                : make_ordering(c.ordering.empty() ? "fcfs" : c.ordering);
    parts.former = std::make_unique<EcoFormer>(
        s, v.kv_pipelining ? std::make_unique<KvPipelining>(c.pipeline_buffer, s.order, c.eco_pipelining == "paper")
                           : nullptr);
    // Offload-free preemption through the shared parts: the re-predicting
    // supervisor, the GT that outgrew its reservation gives way itself, held.
    parts.limits = SessionLimits{c.max_batch_size, 0, PreemptionMode::Held};
    parts.victim = std::make_unique<RequesterVictim>();
    parts.supervisor = std::make_unique<RepredictSupervisor>(s.padding);
    return std::make_unique<ComposedScheduler>(v.name, std::move(parts));
  }
  fail("unknown ecoserve variant '{}'", variant);
}

}  // namespace seer
