// The registry of named scheduler presets: one line per policy.
#include <functional>

#include "common/error.h"
#include "scheduler/iteration_profile.h"
#include "scheduler/policies/presets.h"
#include "scheduler/scheduler.h"

namespace seer {

namespace {

struct PresetEntry {
  PolicyInfo info;
  std::function<std::unique_ptr<Scheduler>(const SchedulerConfig&)> make;
};

const std::vector<PresetEntry>& presets() {
  static const std::vector<PresetEntry> table = {
      {{.name = "static",
        .description = "request-level batching: a batch runs until all its members finish [FasterTransformer]"},
       make_static_scheduler},
      {{.name = "orca",
        .description = "iteration-level batching, max-allocation, whole prompts, batch-size cap [Orca]"},
       make_orca_scheduler},
      {{.name = "vllm",
        .description = "block-allocation on demand, prefill-prioritizing, preempt latest arrival [vLLM]"},
       make_vllm_scheduler},
      {{.name = "sarathi",
        .description = "stall-free batching, chunked prefill, token budget from the TBT SLO [Sarathi-Serve]",
        .uses_token_budget = true},
       make_sarathi_scheduler},
      {{.name = "s3",
        .description = "output-length prediction, exact allocation, first-fit-decreasing packing, supervisor "
                       "that doubles or preempts the mispredicted [S3]",
        .needs_predictor = true},
       make_s3_scheduler},
      {{.name = "ecoserve-d",
        .description = "EcoServe ablation D: decoupled prompt/generation queues, exact allocation [EcoServe]",
        .uses_token_budget = true},
       [](const SchedulerConfig& c) { return make_ecoserve_scheduler(c, "ecoserve-d"); }},
      {{.name = "ecoserve-sd",
        .description = "EcoServe ablation SD: + time-synced generation groups [EcoServe]",
        .uses_token_budget = true},
       [](const SchedulerConfig& c) { return make_ecoserve_scheduler(c, "ecoserve-sd"); }},
      {{.name = "ecoserve-sdo",
        .description = "EcoServe ablation SDO: + bucketed ordering, best-fit admission [EcoServe]",
        .uses_token_budget = true},
       [](const SchedulerConfig& c) { return make_ecoserve_scheduler(c, "ecoserve-sdo"); }},
      {{.name = "ecoserve",
        .description = "decoupled, time-synced, ordered, KV-pipelined; offload-free preemption [EcoServe]",
        .uses_token_budget = true},
       [](const SchedulerConfig& c) { return make_ecoserve_scheduler(c, "ecoserve"); }},
      {{.name = "pensieve",
        .description = "stateful multi-turn: conversation KV cached over device and host tiers, evicted by "
                       "recompute cost, unified batches [Pensieve]",
        .uses_token_budget = true,
        .caches_conversations = true,
        .cache_host_tier = true,
        .default_token_budget = kPensieveDefaultTokenBudget},
       make_pensieve_scheduler},
      {{.name = "pensieve-gpu",
        .description = "pensieve with a device-only conversation cache: evicted means dropped [Pensieve]",
        .uses_token_budget = true,
        .caches_conversations = true,
        .cache_host_tier = false,
        .default_token_budget = kPensieveDefaultTokenBudget},
       make_pensieve_gpu_scheduler},
      {{.name = "seer",
        .description = "stall-free chunked prefill under the TBT budget [Sarathi-Serve] + earliest first-token "
                       "deadline first, shortest predicted output first within a 1 s window [S3, EcoServe] + "
                       "offload-free (held) preemption [EcoServe] + the conversation cache with prefix reuse "
                       "[Pensieve]",
        .uses_token_budget = true,
        .caches_conversations = true,
        .cache_host_tier = true},
       make_seer_scheduler},
  };
  return table;
}

// The user's knobs by their one table (scheduler_knobs.h), then what the stack derived.
void validate(const SchedulerConfig& c) {
  check_scheduler_knobs(c);
  if (c.tile <= 0) fail("scheduler: tile must be > 0 (got {})", c.tile);
  if (!(c.tbt_slo_s >= 0)) fail("scheduler: tbt_slo_s must be >= 0 (got {})", c.tbt_slo_s);
  if (c.padding && !(*c.padding >= 0)) fail("scheduler: padding must be >= 0 (got {})", *c.padding);
}

}  // namespace

const std::vector<PolicyInfo>& scheduler_policies() {
  static const std::vector<PolicyInfo> infos = [] {
    std::vector<PolicyInfo> v;
    for (const auto& p : presets()) v.push_back(p.info);
    return v;
  }();
  return infos;
}

const PolicyInfo* find_policy(std::string_view name) {
  for (const auto& p : scheduler_policies())
    if (p.name == name) return &p;
  return nullptr;
}

void require_predictor_for(std::string_view policy, bool have_predictor) {
  const PolicyInfo* info = find_policy(policy);
  if (info && info->needs_predictor && !have_predictor)
    fail("--policy {} plans with predicted output lengths: give --predictor (a file from `seer predict train`; in "
         "`seer sim` also oracle or noisy:ACC)",
         policy);
}

const PolicyInfo& policy_info(const std::string& policy) {
  for (const auto& p : presets())
    if (p.info.name == policy) return p.info;
  std::string names;
  for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + p.info.name;
  fail("unknown scheduler policy '{}' (expected one of: {})", policy, names);
}

std::unique_ptr<Scheduler> make_scheduler(const SchedulerConfig& config) {
  validate(config);
  for (const auto& p : presets())
    if (p.info.name == config.policy) return p.make(config);
  std::string names;
  for (const auto& p : presets()) names += (names.empty() ? "" : ", ") + p.info.name;
  fail("unknown scheduler policy '{}' (expected one of: {})", config.policy, names);
}

int32_t resolve_token_budget(const SchedulerConfig& c) {
  if (c.token_budget > 0) return c.token_budget;
  if (c.tbt_slo_s > 0) {
    if (!c.iteration_time) fail("scheduler: --tbt-slo needs an iteration-time profile to derive the token budget");
    return token_budget_for_slo(c.iteration_time, c.tbt_slo_s, c.tile, c.max_token_budget);
  }
  const PolicyInfo* info = find_policy(c.policy);
  return info && info->default_token_budget > 0 ? info->default_token_budget : c.default_token_budget;
}

bool policy_uses_token_budget(const std::string& policy) {
  for (const auto& p : presets())
    if (p.info.name == policy) return p.info.uses_token_budget;
  return false;
}

}  // namespace seer
