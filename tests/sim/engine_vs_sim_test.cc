// One trace through the engine with a deterministic fake executor and through the
// simulator gives identical schedules: the simulator adds nothing to the policy
// code but the cost model's times (docs/architecture.md §2).
#include <algorithm>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "sim/sim_runner.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

struct Chunk {
  RequestId request;
  int32_t start, num_tokens;
  bool sample;
  bool operator==(const Chunk&) const = default;
};
using Schedule = std::vector<std::vector<Chunk>>;

class PlanRecorder final : public EngineObserver {
 public:
  void on_plan(const StepPlan& plan) override {
    std::vector<Chunk> step;
    for (const auto& c : plan.chunks) step.push_back({c.request, c.start, c.num_tokens, c.sample});
    schedule.push_back(std::move(step));
  }
  Schedule schedule;
};

// Returns the cost model's time for each plan, computed here from the plan's
// chunks, and a fixed token for each sampled chunk.
class FakeExecutor final : public Executor {
 public:
  FakeExecutor(const CostModel& cost, int64_t bytes_per_block) : cost_(cost), bytes_per_block_(bytes_per_block) {}
  StepResult execute(const StepPlan& plan) override {
    IterationShape shape;
    for (const auto& c : plan.chunks) shape.chunks.push_back({c.num_tokens, c.start, c.sample});
    for (const auto& op : plan.kv_ops)
      (op.kind == KvOpKind::Copy ? shape.copy_bytes : shape.swap_bytes) += bytes_per_block_;
    StepResult r;
    r.elapsed_s = cost_.iteration_time(shape);
    for (const auto& c : plan.chunks)
      if (c.sample) r.sampled.push_back({c.request, 42, -0.5f});
    return r;
  }
  bool simulated() const override { return true; }

 private:
  const CostModel& cost_;
  int64_t bytes_per_block_;
};

// The engine driven by hand: requests join when the clock reaches their arrival.
Schedule run_engine_directly(const SimSetup& setup, std::vector<TraceEntry> trace) {
  CostModel cost(setup.model, setup.hardware, setup.cost);
  KvManager kv(sim_kv_config(setup, cost));
  SchedulerConfig config = setup.scheduler;
  const auto kv_tokens = static_cast<int64_t>(setup.profile_kv_fraction * kv.usage().device.total * kv.config().block_size);
  config.iteration_time = [&](int32_t t) { return profile_iteration_time(cost, t, setup.profile_context, kv_tokens); };
  auto scheduler = make_scheduler(config);
  FakeExecutor executor(cost, kv.config().bytes_per_block);
  VirtualClock clock;
  EngineConfig ec;
  ec.max_model_len = setup.max_model_len;
  Engine engine(*scheduler, executor, kv, clock, ec);
  PlanRecorder recorder;
  engine.add_observer(&recorder);
  std::stable_sort(trace.begin(), trace.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  size_t next = 0;
  while (next < trace.size() || engine.has_unfinished()) {
    for (; next < trace.size() && trace[next].arrival_s <= clock.now(); ++next) {
      const TraceEntry& e = trace[next];
      Request r;
      r.external_id = e.id;
      r.arrival_s = e.arrival_s;
      r.prompt_tokens.assign(static_cast<size_t>(e.prompt_tokens), 3);
      r.sampling.max_tokens = setup.max_model_len - e.prompt_tokens;
      r.sampling.ignore_eos = true;
      r.forced_output_len = e.output_tokens;
      engine.add_request(std::move(r));
    }
    if (!engine.has_unfinished() || engine.step().idle) {
      if (next == trace.size()) break;
      clock.advance_to(trace[next].arrival_s);
    }
  }
  EXPECT_FALSE(engine.has_unfinished());
  return recorder.schedule;
}

class EngineVsSim : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineVsSim, IdenticalSchedules) {
  SimSetup setup = testing::small_setup(GetParam(), 10000);  // memory pressure: preemptions for vllm
  auto trace = testing::synthetic_trace(100, 30.0, 77);
  PlanRecorder sim_plans;
  SimResult sim = run_simulation(setup, trace, &sim_plans);
  ASSERT_EQ(sim.records.size(), trace.size());
  Schedule direct = run_engine_directly(setup, trace);
  ASSERT_GT(direct.size(), 100u);
  ASSERT_EQ(sim_plans.schedule.size(), direct.size());
  for (size_t i = 0; i < direct.size(); ++i) ASSERT_EQ(sim_plans.schedule[i], direct[i]) << "iteration " << i;
  if (GetParam() == "vllm") {
    EXPECT_GT(sim.summary.totals.preemptions, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Policies, EngineVsSim, ::testing::Values("static", "orca", "vllm", "sarathi", "ecoserve", "seer"));

}  // namespace
}  // namespace seer
