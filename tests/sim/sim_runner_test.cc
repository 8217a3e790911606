#include "sim/sim_runner.h"

#include <map>

#include <gtest/gtest.h>

#include "common/error.h"
#include "kv/kv_manager.h"
#include "sim/sim_options.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

using testing::small_setup;
using testing::synthetic_trace;

class SimEachPolicy : public ::testing::TestWithParam<std::string> {};

TEST_P(SimEachPolicy, FinishesEveryRequestAtItsTrueLength) {
  auto trace = synthetic_trace(80, 20.0, 5);
  // 12k tokens of KV: the 80 requests (about 40k tokens) contend for memory.
  SimResult r = run_simulation(small_setup(GetParam(), 12000), trace);
  EXPECT_EQ(r.rejected, 0);
  EXPECT_EQ(r.truncated, 0);
  ASSERT_EQ(r.records.size(), trace.size());
  std::map<std::string, const TraceEntry*> by_id;
  for (const auto& e : trace) by_id[e.id] = &e;
  for (const auto& rec : r.records) {
    const TraceEntry* e = by_id.at(rec.id);
    EXPECT_EQ(rec.output_tokens, e->output_tokens) << rec.id;
    EXPECT_EQ(rec.prompt_tokens, e->prompt_tokens) << rec.id;
    EXPECT_EQ(rec.token_times_s.size(), static_cast<size_t>(e->output_tokens)) << rec.id;
    EXPECT_DOUBLE_EQ(rec.arrival_s, e->arrival_s);
    EXPECT_GE(rec.first_scheduled_s, rec.arrival_s);
    EXPECT_GT(rec.first_token_s, rec.first_scheduled_s);
    EXPECT_DOUBLE_EQ(rec.finish_s, rec.token_times_s.back());
  }
  EXPECT_EQ(r.summary.requests, 80);
  EXPECT_GT(r.summary.output_tokens_per_s, 0);
}

INSTANTIATE_TEST_SUITE_P(Policies, SimEachPolicy, ::testing::Values("static", "orca", "vllm", "sarathi"));

TEST(Sim, PoliciesShowTheirDefiningBehaviourUnderPressure) {
  auto trace = synthetic_trace(120, 40.0, 9);
  SimResult vllm = run_simulation(small_setup("vllm", 12000), trace);
  SimResult orca = run_simulation(small_setup("orca", 12000), trace);
  SimResult sarathi = run_simulation(small_setup("sarathi", 12000), trace);
  // vLLM allocates on demand and preempts when blocks run out.
  EXPECT_GT(vllm.summary.totals.preemptions, 0);
  EXPECT_GT(vllm.summary.totals.recomputed_tokens, 0);
  // Orca reserves prompt + max_tokens (the context) up front: no preemptions, but
  // far fewer requests fit at once.
  EXPECT_EQ(orca.summary.totals.preemptions, 0);
  EXPECT_LT(orca.summary.batch_size.max, vllm.summary.batch_size.max);
  // Sarathi never exceeds its token budget, chosen from the 50 ms TBT SLO.
  ASSERT_GT(sarathi.token_budget, 0);
  EXPECT_EQ(sarathi.token_budget % 128, 0);
  EXPECT_LE(sarathi.summary.tokens_per_iteration.max, sarathi.token_budget);
  EXPECT_LT(sarathi.summary.tbt_s.max, vllm.summary.tbt_s.max);
  // The budget's profile assumes a full KV pool, so iterations meet the SLO; only
  // gaps across a preemption (waiting, then recomputing) exceed it.
  EXPECT_LE(sarathi.summary.tbt_s.p99, 0.05);
  EXPECT_GT(vllm.summary.tbt_s.p99, 0.05);
}

TEST(Sim, SwapPreemptionMovesBytesOverTheHostLink) {
  auto trace = synthetic_trace(120, 40.0, 9);
  SimSetup s = small_setup("vllm", 12000);
  s.scheduler.preemption = PreemptionMode::Swap;
  SimResult r = run_simulation(s, trace);
  ASSERT_EQ(r.records.size(), trace.size());
  EXPECT_GT(r.summary.totals.preemptions, 0);
  EXPECT_GT(r.summary.totals.swapped_bytes, 0);
  EXPECT_EQ(r.summary.totals.swapped_bytes % (16 * int64_t{2} * 32 * 4096 * 2), 0);  // whole blocks
}

TEST(Sim, RequestsLongerThanTheContextAreRejectedOrCut) {
  std::vector<TraceEntry> trace(3);
  trace[0] = testing::entry("fits", 0.0, 100, 50);
  trace[1] = testing::entry("too-long-prompt", 0.1, 5000, 10);
  trace[2] = testing::entry("cut", 0.2, 4000, 500);
  SimResult r = run_simulation(small_setup("vllm"), trace);
  EXPECT_EQ(r.rejected, 1);
  EXPECT_EQ(r.truncated, 1);
  ASSERT_EQ(r.records.size(), 2u);
  const RequestRecord& cut = r.records[0].id == "cut" ? r.records[0] : r.records[1];
  EXPECT_EQ(cut.id, "cut");
  EXPECT_EQ(cut.output_tokens, 96);  // 4096 - 4000
}

// EcoServe's deadline, scale x (t_p + t_g x output): with the request's own times a
// long prompt gets a longer deadline; with the trace's means (--slo-base trace, the
// paper's statement) every request of one output length gets the same.
TEST(Sim, SloDeadlinesFromTheRequestOrFromTheTraceMeans) {
  std::vector<TraceEntry> trace = {testing::entry("short", 0.0, 100, 50), testing::entry("long", 0.1, 2000, 50)};
  auto deadlines = [&](bool trace_means) {
    SimSetup s = small_setup("vllm");
    s.slo_scale = 2;
    s.slo_from_trace_means = trace_means;
    std::map<std::string, double> d;
    for (const RequestRecord& r : run_simulation(s, trace).records) d[r.id] = r.slo.deadline_s;
    return d;
  };
  const auto own = deadlines(false), means = deadlines(true);
  ASSERT_EQ(own.size(), 2u);
  ASSERT_EQ(means.size(), 2u);
  EXPECT_GT(own.at("long"), own.at("short"));
  EXPECT_DOUBLE_EQ(means.at("long"), means.at("short"));
  EXPECT_GT(means.at("short"), own.at("short"));  // the mean prompt is longer than the short one's
  EXPECT_LT(means.at("long"), own.at("long"));
}

TEST(Sim, ConversationTurnsWaitForThePreviousAnswer) {
  std::vector<TraceEntry> trace(3);
  trace[0] = testing::entry("t0", 0.0, 200, 40);
  trace[0].conversation = "c";
  trace[1] = testing::entry("t1", 0.01, 30, 20);  // the trace's time is before t0 can finish
  trace[1].conversation = "c";
  trace[1].turn = 1;
  trace[1].think_s = 2.0;
  trace[2] = testing::entry("solo", 0.5, 100, 10);
  SimResult r = run_simulation(small_setup("vllm"), trace);
  ASSERT_EQ(r.records.size(), 3u);
  std::map<std::string, RequestRecord> rec;
  for (const auto& x : r.records) rec[x.id] = x;
  EXPECT_DOUBLE_EQ(rec["t1"].arrival_s, rec["t0"].finish_s + 2.0);
  EXPECT_EQ(rec["t1"].prompt_tokens, 200 + 40 + 30);  // the conversation so far + the new message
  EXPECT_DOUBLE_EQ(rec["solo"].arrival_s, 0.5);
}

TEST(Sim, KvPoolIsWhatTheWeightsLeave) {
  SimSetup s = small_setup("vllm");
  s.kv_fraction = 0.9;
  CostModel cost(s.model, s.hardware, s.cost);
  KvConfig kv = sim_kv_config(s, cost);
  double expected = (0.9 * s.hardware.memory_bytes - cost.weight_bytes_per_device()) /
                    (16.0 * cost.kv_bytes_per_token_per_device());
  EXPECT_EQ(kv.device_blocks, static_cast<int32_t>(expected));
  EXPECT_EQ(kv.bytes_per_block, 16 * cost.kv_bytes_per_token());
  s.kv_fraction = 0.1;  // 8 GiB < 13.5 GB of weights
  EXPECT_THROW(sim_kv_config(s, cost), Error);
}

// --kv-type sets the cost model's bytes per K/V element: f32 K/V halve the blocks
// the same memory holds.
TEST(Sim, KvTypeSetsBytesPerElementAndPoolSize) {
  SimOptions o;
  o.model = "Llama-2-7B";
  o.hardware = "A100-80GB";
  SimSetup f16 = make_sim_setup(o);
  EXPECT_EQ(f16.cost.kv_bytes_per_element, 2.0);
  o.kv_type = "f32";
  SimSetup f32 = make_sim_setup(o);
  EXPECT_EQ(f32.cost.kv_bytes_per_element, 4.0);
  const KvConfig a = sim_kv_config(f16, CostModel(f16.model, f16.hardware, f16.cost));
  const KvConfig b = sim_kv_config(f32, CostModel(f32.model, f32.hardware, f32.cost));
  EXPECT_NEAR(a.device_blocks, 2.0 * b.device_blocks, 1.0);
  EXPECT_EQ(a.bytes_per_block * 2, b.bytes_per_block);
  o.kv_type = "fp8";
  EXPECT_THROW(make_sim_setup(o), Error);
}

// q8_0 K/V: 34 bytes per 32 elements, so the same memory holds 64/34 the blocks of f16.
TEST(Sim, Q8_0KvHoldsAbout1Point9TimesTheF16Blocks) {
  SimOptions o;
  o.model = "Llama-2-7B";
  o.hardware = "A100-80GB";
  SimSetup f16 = make_sim_setup(o);
  o.kv_type = "q8_0";
  SimSetup q8 = make_sim_setup(o);
  EXPECT_DOUBLE_EQ(q8.cost.kv_bytes_per_element, 34.0 / 32.0);
  const KvConfig a = sim_kv_config(f16, CostModel(f16.model, f16.hardware, f16.cost));
  const KvConfig b = sim_kv_config(q8, CostModel(q8.model, q8.hardware, q8.cost));
  EXPECT_EQ(b.bytes_per_block * 64, a.bytes_per_block * 34);
  EXPECT_NEAR(static_cast<double>(b.device_blocks) / a.device_blocks, 64.0 / 34.0, 0.01);
}

// q4_0 K/V: 18 bytes per 32 elements, 64/18 (3.56x) the blocks of f16.
TEST(Sim, Q4_0KvHoldsAbout3Point6TimesTheF16Blocks) {
  SimOptions o;
  o.model = "Llama-2-7B";
  o.hardware = "A100-80GB";
  SimSetup f16 = make_sim_setup(o);
  o.kv_type = "q4_0";
  SimSetup q4 = make_sim_setup(o);
  EXPECT_DOUBLE_EQ(q4.cost.kv_bytes_per_element, 18.0 / 32.0);
  const KvConfig a = sim_kv_config(f16, CostModel(f16.model, f16.hardware, f16.cost));
  const KvConfig b = sim_kv_config(q4, CostModel(q4.model, q4.hardware, q4.cost));
  EXPECT_EQ(b.bytes_per_block * 64, a.bytes_per_block * 18);
  EXPECT_NEAR(static_cast<double>(b.device_blocks) / a.device_blocks, 64.0 / 18.0, 0.01);
}

}  // namespace
}  // namespace seer
