#pragma once
// A Scheduler assembled from parts (DESIGN §2): an allocation rule, an ordering of
// the waiting queue, a batch former and session limits (batch size, watermark,
// preemption mode). The named presets in policies/ are configurations of it.
#include <memory>
#include <string>

#include "scheduler/parts/allocation_rule.h"
#include "scheduler/parts/ordering.h"
#include "scheduler/parts/schedule_session.h"
#include "scheduler/scheduler.h"

namespace seer {

struct SchedulerParts {
  std::unique_ptr<AllocationRule> allocation;
  std::unique_ptr<Ordering> ordering;
  std::unique_ptr<BatchFormer> former;
  SessionLimits limits;
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
