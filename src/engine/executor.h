#pragma once
// An Executor carries out a StepPlan: the ModelExecutor with a real forward pass on a
// Backend, the SimExecutor (sim/) with a cost model in virtual time. Everything else
// in the engine loop is shared by both (docs/architecture.md §2). The plan is the
// executor's whole input: it reads neither the scheduler's request table nor the KV
// manager (what it needs of them comes in the plan, engine/executor_feed.h).
#include <cstdint>
#include <vector>

#include "sampling/sampling_params.h"
#include "scheduler/step_plan.h"

namespace seer {

struct SampledToken {
  RequestId request = -1;
  int32_t token = 0;
  float logprob = 0.0f;
  std::vector<TopLogprob> top_logprobs{};  // with sampling.top_logprobs > 0
};

struct StepResult {
  // In chunk order, per chunk with sample == true: its accepted draft tokens, then
  // the token sampled after them (one entry for a chunk without drafts). A request
  // has at most one sampled chunk per plan, so its entries are the consecutive run
  // with its id.
  std::vector<SampledToken> sampled;
  double elapsed_s = 0.0;  // duration of the iteration (measured or modelled)
};

class Executor {
 public:
  virtual ~Executor() = default;
  // Carries out the plan; the sampled tokens come back in chunk order.
  virtual StepResult execute(const StepPlan& plan) = 0;
  // True if elapsed_s is virtual time the engine must add to a VirtualClock.
  virtual bool simulated() const = 0;
  // False for an executor that needs only the chunks' shapes and the KV operations
  // (the SimExecutor's cost model): the engine then leaves the plan's per-request
  // fields (finished, new_requests, appended_tokens, block_tables) empty, which
  // keeps the simulator's iterations as cheap as its scheduling.
  virtual bool needs_request_data() const { return true; }
};

}  // namespace seer
