#pragma once
// The real Executor: turns a StepPlan into one flat ForwardBatch on a Backend
// (docs/architecture.md §1.3), performs the plan's KV operations first, and samples one token per
// chunk that asks for it with that request's own Sampler (more when the chunk
// verifies draft tokens: step_plan.h). Its own ExecutorState,
// kept from the plans alone, holds each request's tokens and block table; samplers
// are kept here, keyed by request id, until a plan lists the request as finished.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "engine/executor.h"
#include "engine/executor_state.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace seer {

// The batch for a plan already applied to `state` (ExecutorState::apply checked it):
// one sequence per distinct request (a request with two chunks gets one sequence,
// so both ranges share its block table); `sample_rows` lists the rows of logits of
// the chunks with sample == true in order, 1 + num_draft rows per chunk.
ForwardBatch build_forward_batch(const StepPlan& plan, const ExecutorState& state, std::vector<int32_t>* sample_rows);

class ModelExecutor final : public Executor {
 public:
  // `seed` seeds the per-request seeds of requests that set none.
  explicit ModelExecutor(Backend& backend, uint64_t seed = 0x5eed);

  StepResult execute(const StepPlan& plan) override;
  bool simulated() const override { return false; }

  Backend& backend() { return backend_; }
  const ExecutorState& state() const { return state_; }
  size_t num_samplers() const { return samplers_.size(); }

 private:
  Sampler& sampler_for(RequestId id, const ExecutorRequest& r);

  Backend& backend_;
  Rng seeds_;
  ExecutorState state_;
  std::unordered_map<RequestId, Sampler> samplers_;
  std::vector<float> logits_;
  std::vector<int32_t> sample_rows_;
};

}  // namespace seer
