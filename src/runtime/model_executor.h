#pragma once
// The real Executor: turns a StepPlan into one flat ForwardBatch on a Backend
// (docs/architecture.md §1.3), performs the plan's KV operations first, and samples one token per
// chunk that asks for it with that request's own Sampler (more when the chunk
// verifies draft tokens: step_plan.h). Requests are sampled in parallel on a few
// host threads, and the grammar masks of constrained requests are computed while the
// forward pass runs (HostTasks), unless told otherwise. Its own ExecutorState,
// kept from the plans alone, holds each request's tokens and block table; samplers
// are kept here, keyed by request id, until a plan lists the request as finished.
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "backend/backend.h"
#include "engine/executor.h"
#include "engine/executor_state.h"
#include "runtime/host_tasks.h"
#include "sampling/rng.h"
#include "sampling/sampler.h"

namespace seer {

// The batch for a plan already applied to `state` (ExecutorState::apply checked it):
// one sequence per distinct request (a request with two chunks gets one sequence,
// so both ranges share its block table); `sample_rows` lists the rows of logits of
// the chunks with sample == true in order, 1 + num_draft rows per chunk.
ForwardBatch build_forward_batch(const StepPlan& plan, const ExecutorState& state, std::vector<int32_t>* sample_rows);

// When the token masks of constrained requests are computed.
enum class GrammarMasks {
  WithForwardPass,  // on a second thread while the forward pass runs
  AfterForwardPass  // in the sampling loop, one request after another
};

struct HostWork {
  GrammarMasks masks = GrammarMasks::WithForwardPass;
  // Threads that sample (the caller included); 0: the hardware's, at most 8.
  int sampling_threads = 0;
};

class ModelExecutor final : public Executor {
 public:
  // `seed` seeds the per-request seeds of requests that set none.
  explicit ModelExecutor(Backend& backend, uint64_t seed = 0x5eed, HostWork host = {});

  StepResult execute(const StepPlan& plan) override;
  bool simulated() const override { return false; }

  Backend& backend() { return backend_; }
  const ExecutorState& state() const { return state_; }
  size_t num_samplers() const { return samplers_.size(); }

 private:
  // One sampled chunk: its request's sampler and first row of logits.
  struct SampleJob {
    const ScheduledChunk* chunk;
    Sampler* sampler;
    size_t first_row;
    std::vector<SampleResult> tokens;  // 1 + accepted drafts
    std::vector<int32_t> output;       // output so far, while drafts are verified
  };
  Sampler& sampler_for(RequestId id, const ExecutorRequest& r);
  void collect_sample_jobs(const StepPlan& plan);
  // Starts the masks of the constrained jobs on one thread; false when there is none.
  bool start_masks();
  void sample(SampleJob& job);

  Backend& backend_;
  Rng seeds_;
  ExecutorState state_;
  GrammarMasks masks_;
  HostTasks host_;
  std::vector<SampleJob> jobs_;
  std::vector<size_t> constrained_;  // indices into jobs_
  std::unordered_map<RequestId, Sampler> samplers_;
  std::vector<float> logits_;
  std::vector<int32_t> sample_rows_;
};

}  // namespace seer
