#pragma once
// The real Executor: turns a StepPlan into one flat ForwardBatch on a Backend
// (docs/architecture.md §1.3), performs the plan's KV operations first, and samples one token per
// chunk that asks for it with that request's own Sampler (kept here, keyed by
// request id, until the request leaves the table).
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "engine/executor.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace seer {

// The batch for a plan: one sequence per distinct request (a request with two
// chunks gets one sequence, so both ranges share its block table); `sample_rows[i]`
// is the row of logits for the i-th chunk with sample == true.
ForwardBatch build_forward_batch(const StepPlan& plan, const RequestTable& requests, const KvManager& kv,
                                 std::vector<int32_t>* sample_rows);

class ModelExecutor final : public Executor {
 public:
  // `seed` seeds the per-request seeds of requests that set none.
  explicit ModelExecutor(Backend& backend, uint64_t seed = 0x5eed);

  StepResult execute(const StepPlan& plan, const RequestTable& requests, const KvManager& kv) override;
  bool simulated() const override { return false; }

  Backend& backend() { return backend_; }
  size_t num_samplers() const { return samplers_.size(); }

 private:
  Sampler& sampler_for(const Request& r);
  void forget_finished(const RequestTable& requests);

  Backend& backend_;
  Rng seeds_;
  std::unordered_map<RequestId, Sampler> samplers_;
  std::vector<float> logits_;
  std::vector<int32_t> sample_rows_;
};

}  // namespace seer
