// Policy `seer` (docs/seer-policy.md): which parts it composes, and its defining
// behaviours in the scheduler: predictions order the waiting queue and reserve
// nothing; with `--allocation exact`, exact reservations by prediction (none
// without one) and the supervisor's doubling; offload-free (held) preemption in the
// stall-free former.
#include <optional>
#include <random>
#include <string>

#include <gtest/gtest.h>

#include "scheduler/composed_scheduler.h"
#include "scheduler/parts/stall_free_former.h"
#include "scheduler/scheduler_harness.h"

namespace seer {
namespace {

using testing::SchedulerHarness;

SchedulerConfig seer_config(int32_t budget = 64) {
  SchedulerConfig c;
  c.policy = "seer";
  c.token_budget = budget;
  c.padding = 0;
  return c;
}

// `seer --allocation exact`: S3's reservations, staged at decode start.
SchedulerConfig seer_exact_config(int32_t budget = 64) {
  SchedulerConfig c = seer_config(budget);
  c.allocation = "exact";
  return c;
}

Request& add_predicted(SchedulerHarness& h, int32_t prompt, int32_t predicted, int32_t output, int32_t max_tokens) {
  return h.add(prompt, output, max_tokens, -1, [&](Request& r) { r.predicted_output_len = predicted; });
}

TEST(SeerPolicy, ComposesTheSeedsParts) {
  auto s = make_scheduler(seer_config(96));
  auto* composed = dynamic_cast<ComposedScheduler*>(s.get());
  ASSERT_NE(composed, nullptr);
  const SchedulerParts& p = composed->parts();
  EXPECT_EQ(p.former->name(), "stall-free");  // Sarathi-Serve
  EXPECT_EQ(dynamic_cast<const StallFreeFormer&>(*p.former).token_budget(), 96);
  EXPECT_EQ(p.allocation->name(), "block");  // predictions order, they do not reserve
  EXPECT_EQ(p.ordering->name(), "deadline-spf");
  ASSERT_NE(p.supervisor, nullptr);
  EXPECT_EQ(p.supervisor->name(), "doubling");
  ASSERT_NE(p.victim, nullptr);
  EXPECT_EQ(p.victim->name(), "requester");
  EXPECT_EQ(p.limits.preemption, PreemptionMode::Held);  // EcoServe
  const PolicyInfo& info = policy_info("seer");  // Pensieve: the owner builds the cache
  EXPECT_TRUE(info.caches_conversations);
  EXPECT_TRUE(info.cache_host_tier);
  EXPECT_TRUE(info.uses_token_budget);
  EXPECT_FALSE(info.needs_predictor);  // runs without a predictor too
}

TEST(SeerPolicy, ExactReservesByPredictionWhenDecodingStartsAndNothingWithoutOne) {
  auto s = make_scheduler(seer_exact_config());
  const auto& alloc = *dynamic_cast<ComposedScheduler&>(*s).parts().allocation;
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.sampling.max_tokens = 100;
  EXPECT_EQ(alloc.reservation_tokens(r), 0);  // block-allocation: on demand
  EXPECT_EQ(alloc.admission_tokens(r), 0);
  r.predicted_output_len = 20;
  EXPECT_EQ(alloc.reservation_tokens(r), 0);  // prefilling: the prompt's blocks on demand
  EXPECT_EQ(alloc.admission_tokens(r), 30);   // but admitted only when all of it is available
  r.num_computed_tokens = 10;
  r.output_tokens.push_back(1);  // the prefill sampled the first token: decoding starts
  EXPECT_EQ(alloc.reservation_tokens(r), 30);
}

TEST(SeerPolicy, ExactPromptBlocksComeChunkByChunkAndTheOutputIsReservedAtDecodeStart) {
  // 64 blocks of 4 tokens; budget 8: a 24-token prompt prefills in 3 chunks.
  SchedulerHarness h(seer_exact_config(8), KvConfig{4, 64, 0, 0});
  Request& a = add_predicted(h, 24, 16, 16, 64);
  h.step();
  EXPECT_EQ(a.reserved_tokens, 0);
  EXPECT_EQ(h.kv.table(a.id).reserved, 0);
  EXPECT_EQ(h.kv.table(a.id).num_device, 2);  // the first chunk only
  h.step();
  h.step();  // the last chunk samples the first output token
  EXPECT_EQ(h.kv.table(a.id).num_device, 6);
  EXPECT_EQ(h.kv.table(a.id).reserved, 0);
  h.step();  // the first decode: prompt + predicted output reserved
  EXPECT_EQ(a.reserved_tokens, 40);
  EXPECT_EQ(h.kv.table(a.id).reserved, 10);
  h.run(200);
  EXPECT_EQ(h.finished, 1);
}

TEST(SeerPolicy, ExactAdmitsByTheWholePredictedReservation) {
  // 16 blocks of 4 tokens, 1 block kept free while others run. b's prompt alone
  // (2 blocks) would fit beside a, but not its predicted output (14 blocks), so
  // it waits until a is done.
  SchedulerHarness h(seer_exact_config(64), KvConfig{4, 16, 0, 0});
  Request& a = add_predicted(h, 8, 24, 24, 64);
  Request& b = add_predicted(h, 8, 48, 48, 64);
  h.step();
  EXPECT_EQ(a.state, RequestState::Running);
  EXPECT_EQ(b.state, RequestState::Waiting);
  h.run(500);
  EXPECT_EQ(h.finished, 2);
}

TEST(SeerPolicy, ExactOutputReservationThatDoesNotFitAtDecodeStartHoldsTheRequest) {
  // 12 blocks of 4 tokens. a and b (prompt 8, predicted 20: 7 blocks each) are
  // admitted in the same iteration, each seeing its 7 blocks available, and
  // prefill. When decoding starts a reserves its 7; b's do not fit beside them:
  // b is held keeping its prompt's K/V and resumes when a is done.
  SchedulerHarness h(seer_exact_config(64), KvConfig{4, 12, 0, 0});
  RequestId a = add_predicted(h, 8, 20, 20, 64).id;
  RequestId b = add_predicted(h, 8, 20, 20, 64).id;
  int held = 0;
  while (h.requests.size() > 0 && h.steps < 500) {
    h.step([&](const StepPlan& p) {
      for (const auto& pre : p.preemptions) {
        EXPECT_EQ(pre.mode, PreemptionMode::Held);
        EXPECT_EQ(pre.lost_tokens, 0);
        EXPECT_EQ(pre.request, b);
        held += pre.request == b;
      }
    });
    if (const Request* r = h.requests.find(b); r && r->state == RequestState::Held) {
      EXPECT_TRUE(h.kv.table(b).resident(h.kv.config().blocks_for(8)));  // its prompt's K/V stayed
    }
  }
  EXPECT_EQ(held, 1);
  EXPECT_EQ(h.finished, 2);
  EXPECT_EQ(h.kv.usage().reserved_unused, 0);
  EXPECT_EQ(h.kv.usage().request_tables, 0u);
  (void)a;
}

TEST(SeerPolicy, PredictionsReserveNothing) {
  auto s = make_scheduler(seer_config());
  const auto& alloc = *dynamic_cast<ComposedScheduler&>(*s).parts().allocation;
  Request r;
  r.prompt_tokens.assign(10, 1);
  r.sampling.max_tokens = 100;
  r.predicted_output_len = 20;
  EXPECT_EQ(alloc.reservation_tokens(r), 0);
  EXPECT_EQ(alloc.admission_tokens(r), 0);
  r.num_computed_tokens = 10;
  r.output_tokens.push_back(1);  // decoding
  EXPECT_EQ(alloc.reservation_tokens(r), 0);
}

TEST(SeerPolicy, AdmitsTheShortestPredictedFirstWithinADeadlineWindow) {
  // One request per iteration: of three that arrived together with the same SLO,
  // the shortest predicted goes first; without predictions, by arrival.
  auto first_admitted = [](bool predicted) {
    SchedulerConfig c = seer_config();
    c.max_batch_size = 1;
    SchedulerHarness h(c, KvConfig{4, 256, 0, 0});
    for (int32_t output : {60, 8, 30})
      h.add(8, output, 64, 0.0, [&](Request& r) {
        r.slo.ttft_s = 2;
        if (predicted) r.predicted_output_len = output;
      });
    StepPlan p = h.step();
    return p.chunks.empty() ? RequestId{-1} : p.chunks[0].request;
  };
  EXPECT_EQ(first_admitted(true), 1);
  EXPECT_EQ(first_admitted(false), 0);
}

TEST(SeerPolicy, APredictionDoesNotKeepARequestOutThatFits) {
  // The ExactAdmitsByTheWholePredictedReservation setup with the default rule: b's
  // predicted output does not fit beside a's, but its prompt does, so it runs
  // beside a (blocks on demand; held if memory runs out) instead of waiting.
  SchedulerHarness h(seer_config(64), KvConfig{4, 16, 0, 0});
  Request& a = add_predicted(h, 8, 24, 24, 64);
  Request& b = add_predicted(h, 8, 48, 48, 64);
  h.step();
  EXPECT_EQ(a.state, RequestState::Running);
  EXPECT_EQ(b.state, RequestState::Running);
  EXPECT_EQ(a.reserved_tokens, 0);
  h.run(500);
  EXPECT_EQ(h.finished, 2);
}

// Random traces with predictions that are right, too short, too long or missing,
// with and without a host tier: the KV and queue invariants after every step,
// everything finishes and the KV returns to zero.
void run_seer_trace(uint32_t seed, bool host_tier, const std::string& allocation) {
  SchedulerConfig c = seer_config(8 + static_cast<int32_t>(seed % 5) * 8);
  c.allocation = allocation;
  c.max_batch_size = 1 + static_cast<int32_t>(seed % 7);
  c.padding = (seed % 3) * 0.1;
  std::mt19937 rng(seed);
  auto uniform = [&](int lo, int hi) { return lo + static_cast<int>(rng() % static_cast<uint32_t>(hi - lo + 1)); };
  const int32_t device_blocks = 24 + uniform(0, 16);
  SchedulerHarness h(c, KvConfig{4, device_blocks, host_tier ? 40 : 0, 0});
  const int total = 40;
  int added = 0;
  while ((added < total || h.requests.size() > 0) && h.steps < 50000) {
    int arrivals = uniform(0, 3) == 0 ? uniform(1, 4) : 0;
    for (int i = 0; i < arrivals && added < total; ++i, ++added) {
      int32_t max_tokens = uniform(1, 50);
      int32_t output = uniform(1, max_tokens);
      std::optional<int32_t> predicted;
      switch (uniform(0, 3)) {
        case 0: predicted = output; break;
        case 1: predicted = uniform(0, std::max(0, output / 4)); break;
        case 2: predicted = output + uniform(1, 30); break;
        default: break;
      }
      const double ttft = uniform(0, 2) * 2.0;  // SLO classes: none, 2, 4 (steps)
      h.add(uniform(1, 40), output, max_tokens, -1, [&](Request& r) {
        r.predicted_output_len = predicted;
        r.slo.ttft_s = ttft;
      });
    }
    h.step();
    if (::testing::Test::HasFailure()) return;
  }
  EXPECT_EQ(h.finished, total);
  EXPECT_EQ(h.kv.usage().device.free, device_blocks);
  EXPECT_EQ(h.kv.usage().reserved_unused, 0);
  EXPECT_EQ(h.kv.usage().request_tables, 0u);
}

TEST(SeerPolicy, RandomTracesKeepTheInvariantsAndFinish) {
  for (const std::string allocation : {"", "exact"})
    for (bool host : {false, true})
      for (uint32_t seed = 1; seed <= 30; ++seed) {
        SCOPED_TRACE("seed " + std::to_string(seed) + (host ? " host tier " : " ") + allocation);
        run_seer_trace(seed, host, allocation);
        if (HasFailure()) return;
      }
}

TEST(SeerPolicy, ExactUnderPredictedRequestIsHeldKeepingItsKvAndResumes) {
  // 8 blocks of 4 tokens. a is predicted 4 tokens but makes 20; b (predicted
  // right) takes the rest of the memory, so a's doubled reservation does not fit
  // and a pauses offload-free (held): its K/V stay, nothing is recomputed.
  SchedulerHarness h(seer_exact_config(), KvConfig{4, 8, 0, 0});
  RequestId a = add_predicted(h, 4, 4, 12, 40).id;
  RequestId b = add_predicted(h, 4, 12, 12, 40).id;
  bool held = false;
  while (h.requests.size() > 0 && h.steps < 200) {
    h.step([&](const StepPlan& p) {
      for (const auto& pre : p.preemptions) {
        EXPECT_EQ(pre.mode, PreemptionMode::Held);
        EXPECT_EQ(pre.lost_tokens, 0);
        held |= pre.request == a;
      }
    });
    if (const Request* r = h.requests.find(a); r && r->state == RequestState::Held) {
      EXPECT_GT(r->num_computed_tokens, 0);
      EXPECT_TRUE(h.kv.table(a).resident(h.kv.config().blocks_for(r->num_computed_tokens)));  // its K/V stayed on the device
    }
  }
  EXPECT_EQ(h.requests.size(), 0u);
  EXPECT_TRUE(held);
  EXPECT_EQ(h.finished, 2);
  (void)b;
}

TEST(SeerPolicy, ExactHeldRequestsThatBlockEveryoneRecomputeInsteadOfStalling) {
  // Tight memory, many mispredicted requests: the run still finishes (held KV that
  // nothing running frees gives way) with the invariants audited every step.
  SchedulerHarness h(seer_exact_config(32), KvConfig{4, 12, 0, 0});
  for (int i = 0; i < 8; ++i) add_predicted(h, 6, 2, 14 + i, 40);
  h.run(5000);
  EXPECT_EQ(h.finished, 8);
}

}  // namespace
}  // namespace seer
