#pragma once
// A Scheduler assembled from parts (docs/architecture.md): an allocation rule, an
// ordering of the waiting queue, a batch former, a victim policy, an optional
// supervisor and session limits (batch size, watermark, preemption mode). The
// named presets in policies/ are configurations of it.
#include <memory>
#include <string>

#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/ordering.h"
#include "scheduler/parts/schedule_session.h"
#include "scheduler/parts/supervisor.h"
#include "scheduler/parts/victim_policy.h"
#include "scheduler/scheduler.h"

namespace seer {

struct SchedulerParts {
  std::unique_ptr<AllocationRule> allocation;
  std::unique_ptr<Ordering> ordering;
  std::unique_ptr<BatchFormer> former;
  SessionLimits limits;
  std::unique_ptr<VictimPolicy> victim;      // nullptr: latest arrival
  std::unique_ptr<Supervisor> supervisor;    // nullptr: grow past reservations from the free pool
};

class ComposedScheduler final : public Scheduler {
 public:
  ComposedScheduler(std::string name, SchedulerParts parts);
  std::string_view name() const override { return name_; }
  StepPlan schedule(SchedulerContext& ctx) override;
  bool remove(RequestId id) override;
  void check_invariants(const RequestTable& requests, const KvManager& kv) const override;
  const SchedulerParts& parts() const { return parts_; }

 protected:
  QueueKey waiting_key(const Request& r) const override { return parts_.ordering->key(r); }

 private:
  std::string name_;
  SchedulerParts parts_;
};

}  // namespace seer
