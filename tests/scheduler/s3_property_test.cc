// Random traces through policy `s3` with predictions that are right, too short
// (the supervisor must grow or preempt) or too long, with and without a host tier,
// and the KV and queue invariant checkers after every step.
#include <random>

#include <gtest/gtest.h>

#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

struct Outcome {
  int preemptions = 0;
  int growths = 0;
};

Outcome run_s3_trace(uint32_t seed, bool host_tier) {
  SchedulerConfig c;
  c.policy = "s3";
  c.max_batch_size = 1 + static_cast<int32_t>(seed % 9);
  c.max_num_batched_tokens = 96;
  c.padding = (seed % 3) * 0.1;
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  const int32_t device_blocks = 24 + uniform(0, 16);
  SchedulerHarness h(c, KvConfig{4, device_blocks, host_tier ? 40 : 0, 0});
  Outcome out;
  const int total = 40;
  int added = 0;
  while ((added < total || h.requests.size() > 0) && h.steps < 50000) {
    int arrivals = uniform(0, 3) == 0 ? uniform(1, 4) : 0;
    for (int i = 0; i < arrivals && added < total; ++i, ++added) {
      int32_t prompt = uniform(1, 40);
      int32_t max_tokens = uniform(1, 50);
      int32_t output = uniform(1, max_tokens);
      Request& r = h.add(prompt, output, max_tokens);
      switch (uniform(0, 3)) {
        case 0: r.predicted_output_len = output; break;
        case 1: r.predicted_output_len = uniform(0, std::max(0, output / 4)); break;  // far too short
        case 2: r.predicted_output_len = output + uniform(1, 30); break;               // too long
        default: break;  // no prediction: max-allocation
      }
    }
    StepPlan p = h.step();
    out.growths += p.reservation_growths;
    for (const Preemption& pr : p.preemptions) EXPECT_TRUE(pr.outgrew_reservation) << "victim " << pr.request;
    if (::testing::Test::HasFailure()) return out;
  }
  out.preemptions = h.preemptions;
  EXPECT_EQ(h.finished, total);
  EXPECT_EQ(h.kv.usage().device.free, device_blocks);
  EXPECT_EQ(h.kv.usage().host.free, h.kv.usage().host.total);
  EXPECT_EQ(h.kv.usage().reserved_unused, 0);
  EXPECT_EQ(h.kv.usage().request_tables, 0u);
  return out;
}

class S3RandomTraces : public ::testing::TestWithParam<bool> {};

TEST_P(S3RandomTraces, InvariantsHoldEverythingFinishesAndOnlyMispredictedRequestsArePreempted) {
  Outcome total;
  for (uint32_t seed = 1; seed <= 40; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Outcome o = run_s3_trace(seed, GetParam());
    if (HasFailure()) return;
    total.preemptions += o.preemptions;
    total.growths += o.growths;
  }
  // The short predictions exercise both arms of the supervisor.
  EXPECT_GT(total.growths, 0);
  EXPECT_GT(total.preemptions, 0);
}

INSTANTIATE_TEST_SUITE_P(HostTier, S3RandomTraces, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "swap" : "recompute"; });

}  // namespace
}  // namespace seer
