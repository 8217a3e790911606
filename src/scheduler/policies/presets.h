#pragma once
// The named scheduler presets (docs/architecture.md §1.1-1.3), one file each; the registry in
// scheduler_registry.cc lists them.
#include <memory>
#include <string_view>

#include "scheduler/scheduler.h"

namespace seer {

// Pensieve admits a new request only while more than 10 % of device KV is free, so
// running decodes rarely need to suspend anyone (policies/pensieve.cc, seer.cc).
inline constexpr double kPensieveFreeKvForAdmission = 0.10;
// Pensieve's tokens per iteration without --token-budget or a TBT SLO (the
// registry's PolicyInfo::default_token_budget, so start-up lines print it too).
inline constexpr int32_t kPensieveDefaultTokenBudget = 2048;

std::unique_ptr<Scheduler> make_static_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_orca_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_vllm_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_sarathi_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_s3_scheduler(const SchedulerConfig& config);
// `ecoserve`, `ecoserve-d`, `ecoserve-sd`, `ecoserve-sdo` (policies/ecoserve.cc).
std::unique_ptr<Scheduler> make_ecoserve_scheduler(const SchedulerConfig& config, std::string_view variant);
std::unique_ptr<Scheduler> make_pensieve_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_pensieve_gpu_scheduler(const SchedulerConfig& config);
std::unique_ptr<Scheduler> make_seer_scheduler(const SchedulerConfig& config);

}  // namespace seer
