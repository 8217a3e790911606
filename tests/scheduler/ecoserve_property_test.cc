// Random traces through every EcoServe variant with the KV, queue, group and loan
// invariant checkers after every step, with predictions that are often wrong (too
// short and too long): nothing leaks, nothing is owned twice, everything finishes.
#include <cstdio>
#include <random>

#include <gtest/gtest.h>

#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/eco_former.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

struct Counts {
  int preemptions = 0;
  int held = 0;
  int64_t slack_uses = 0;
};

// "POLICY[+FLAG...]": a variant and the paper's behaviours to turn on (on-free,
// group-slack, kv-first, nest).
SchedulerConfig config_of(const std::string& param) {
  SchedulerConfig c;
  size_t plus = param.find('+');
  c.policy = param.substr(0, plus);
  while (plus != std::string::npos) {
    const size_t next = param.find('+', plus + 1);
    const std::string flag = param.substr(plus + 1, next == std::string::npos ? next : next - plus - 1);
    if (flag == "on-free") c.eco_admission = "on-free";
    else if (flag == "group-slack") c.eco_overrun = "group-slack";
    else if (flag == "kv-first") c.eco_order = "kv-first";
    else if (flag == "nest") c.eco_pipelining = "paper";
    else ADD_FAILURE() << "unknown flag " << flag;
    plus = next;
  }
  return c;
}

Counts run_random_trace(const std::string& param, uint32_t seed) {
  SchedulerConfig c = config_of(param);
  c.max_batch_size = 2 + static_cast<int32_t>(seed % 9);
  c.token_budget = 32 + 16 * static_cast<int32_t>(seed % 5);
  c.pt_reserve = (seed % 3) * 0.05;
  c.padding = (seed % 4) * 0.1;
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  const int32_t device_blocks = 24 + uniform(0, 24);
  SchedulerHarness h(c, KvConfig{4, device_blocks, uniform(0, 1) ? 64 : 0, 0});
  const int total = 40;
  int added = 0;
  Counts counts;
  while ((added < total || h.requests.size() > 0) && h.steps < 50000) {
    int arrivals = uniform(0, 2) == 0 ? uniform(1, 4) : 0;
    for (int i = 0; i < arrivals && added < total; ++i, ++added) {
      int32_t prompt = uniform(1, 40);
      int32_t max_tokens = uniform(1, 50);
      int32_t output = uniform(1, max_tokens);
      Request& r = h.add(prompt, output, max_tokens);
      // A noisy predictor: exact, too short (under-prediction) or too long.
      switch (uniform(0, 3)) {
        case 0: r.predicted_output_len = output; break;
        case 1: r.predicted_output_len = uniform(0, output); break;
        case 2: r.predicted_output_len = uniform(output, max_tokens); break;
        default: break;  // no prediction: max_tokens stands for it
      }
      if (uniform(0, 2) == 0) r.slo.deadline_s = 0.1 * uniform(1, 40);
    }
    StepPlan plan = h.step();
    for (const Preemption& p : plan.preemptions) counts.held += p.mode == PreemptionMode::Held;
    if (::testing::Test::HasFailure()) return counts;
  }
  counts.preemptions = h.preemptions;
  counts.slack_uses =
      dynamic_cast<const EcoFormer&>(*dynamic_cast<const ComposedScheduler&>(*h.scheduler).parts().former).slack_uses();
  EXPECT_EQ(h.finished, total);
  EXPECT_EQ(h.kv.usage().device.free, device_blocks);
  EXPECT_EQ(h.kv.usage().host.free, h.kv.usage().host.total);
  EXPECT_EQ(h.kv.usage().reserved_unused, 0);
  EXPECT_EQ(h.kv.usage().request_tables, 0u);
  EXPECT_EQ(h.scheduler->num_waiting() + h.scheduler->num_running() + h.scheduler->num_swapped() +
                h.scheduler->num_held(),
            0u);
  return counts;
}

class EcoRandomTraces : public ::testing::TestWithParam<std::string> {};

TEST_P(EcoRandomTraces, InvariantsHoldAndEverythingFinishes) {
  Counts total;
  for (uint32_t seed = 1; seed <= 30; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Counts c = run_random_trace(GetParam(), seed);
    if (HasFailure()) return;
    total.preemptions += c.preemptions;
    total.held += c.held;
    total.slack_uses += c.slack_uses;
  }
  if (GetParam().find("group-slack") != std::string::npos) {
    EXPECT_GT(total.slack_uses, 0);
  }
  // Under-predictions exhaust reservations: offload-free preemption happens.
  EXPECT_GT(total.held, 0);
  std::printf("[ stats    ] %d preemptions, %d held, %lld slack uses\n", total.preemptions, total.held,
              static_cast<long long>(total.slack_uses));
}

INSTANTIATE_TEST_SUITE_P(Variants, EcoRandomTraces,
                         ::testing::Values("ecoserve-d", "ecoserve-sd", "ecoserve-sdo", "ecoserve",
                                           // The paper's behaviours, one at a time and all together.
                                           "ecoserve+on-free", "ecoserve+group-slack", "ecoserve+kv-first",
                                           "ecoserve+nest", "ecoserve-d+on-free+group-slack",
                                           "ecoserve-sd+on-free+group-slack", "ecoserve-sdo+on-free+group-slack+kv-first",
                                           "ecoserve+on-free+group-slack+kv-first+nest"),
                         [](const ::testing::TestParamInfo<std::string>& info) {
                           std::string n = info.param;
                           for (char& ch : n)
                             if (ch == '-' || ch == '+') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace seer
