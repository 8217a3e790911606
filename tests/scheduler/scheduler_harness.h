#pragma once
// Drives a Scheduler without an executor: each step schedules, then commits the
// plan the way the engine does (computed tokens advance, sampled chunks append a
// token, a request finishes at its forced output length), and checks the KV and
// queue invariants.
#include <functional>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer::testing {

class SchedulerHarness {
 public:
  SchedulerHarness(const SchedulerConfig& config, const KvConfig& kv_config)
      : kv(kv_config), scheduler(make_scheduler(config)) {}

  // A request with `prompt` tokens that finishes after `output` tokens; `prepare`
  // may set more (a prediction, an SLO) before the scheduler sees it.
  Request& add(int32_t prompt, int32_t output, int32_t max_tokens = -1, double arrival = -1,
               const std::function<void(Request&)>& prepare = {}) {
    Request r;
    r.id = next_id++;
    r.arrival_s = arrival >= 0 ? arrival : now;
    r.prompt_tokens.assign(static_cast<size_t>(prompt), 1);
    r.sampling.max_tokens = max_tokens > 0 ? max_tokens : output;
    r.forced_output_len = output;
    if (prepare) prepare(r);
    Request& stored = requests.add(std::move(r));
    scheduler->add(stored);
    return stored;
  }

  // Schedules one iteration, commits it, checks invariants. Calls `inspect` with
  // the plan before committing (state as the scheduler left it).
  StepPlan step(const std::function<void(const StepPlan&)>& inspect = {}) {
    SchedulerContext ctx{requests, kv, now};
    StepPlan plan = scheduler->schedule(ctx);
    if (inspect) inspect(plan);
    std::vector<RequestId> done;
    for (const ScheduledChunk& c : plan.chunks) {
      Request& r = requests.get(c.request);
      EXPECT_EQ(c.start, r.num_computed_tokens) << "request " << c.request;
      EXPECT_TRUE(kv.table(c.request).resident(kv.config().blocks_for(c.start + c.num_tokens))) << "request " << c.request;
      r.num_computed_tokens = c.start + c.num_tokens;
      if (!c.sample) continue;
      r.output_tokens.push_back(2);
      if (r.num_output() >= r.forced_output_len) done.push_back(r.id);
    }
    for (RequestId id : done) {
      scheduler->remove(id);
      kv.free(id);
      requests.erase(id);
      ++finished;
    }
    preemptions += static_cast<int>(plan.preemptions.size());
    kv.check_invariants();
    scheduler->check_invariants(requests, kv);
    now += 1;
    ++steps;
    return plan;
  }

  // Steps until every request finished; fails the test after `max_steps`.
  void run(int max_steps = 100000) {
    while (requests.size() > 0 && steps < max_steps) step();
    EXPECT_EQ(requests.size(), 0u) << "requests left after " << steps << " steps";
  }

  KvManager kv;
  std::unique_ptr<Scheduler> scheduler;
  RequestTable requests;
  RequestId next_id = 0;
  double now = 0;
  int steps = 0;
  int finished = 0;
  int preemptions = 0;
};

}  // namespace seer::testing
