// The simulator models speculative decoding (docs/speculative.md): a decode that
// verifies K drafts costs 1 + K tokens and yields 1 + accepted tokens, each draft
// accepted in turn with the given probability from a seeded stream.
#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"
#include "sim/sim_options.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

using testing::entry;
using testing::small_setup;

SimResult run_one(double acceptance, int32_t draft_tokens, bool gate = true) {
  SimSetup s = small_setup("sarathi");
  s.speculate_acceptance = acceptance;
  s.draft_tokens = draft_tokens;
  s.speculate_gate = gate;
  return run_simulation(s, {entry("a", 0, 200, 101)});
}

TEST(SimSpeculation, CertainAcceptanceYieldsOnePlusKTokensPerStep) {
  const SimResult r = run_one(1.0, 4);
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].output_tokens, 101);
  ASSERT_TRUE(r.summary.speculation);
  // The prefill and 19 decodes verify 4 drafts each and yield 5 tokens; the last
  // token comes alone (no draft may pass max_tokens).
  EXPECT_EQ(r.summary.speculation->verify_steps, 20);
  EXPECT_EQ(r.summary.speculation->accepted_tokens, 80);
  EXPECT_EQ(r.summary.speculation->draft_tokens, 80);
  EXPECT_EQ(r.records[0].token_times_s.size(), 101u);
  EXPECT_EQ(r.summary.speculation->pauses, 0);  // drafts that pay are never paused
  // 21 iterations instead of 101: faster end to end.
  SimSetup plain = small_setup("sarathi");
  const SimResult p = run_simulation(plain, {entry("a", 0, 200, 101)});
  EXPECT_FALSE(p.summary.speculation);
  EXPECT_LT(r.summary.e2e_s.mean, 0.5 * p.summary.e2e_s.mean);
}

TEST(SimSpeculation, NoAcceptanceOnlyCostsTheDraftTokens) {
  const SimResult r = run_one(0.0, 4, /*gate=*/false);
  ASSERT_TRUE(r.summary.speculation);
  EXPECT_EQ(r.summary.speculation->accepted_tokens, 0);
  // The prefill and every decode but the last verify drafts.
  EXPECT_EQ(r.summary.speculation->verify_steps, 100);
  const SimResult p = run_simulation(small_setup("sarathi"), {entry("a", 0, 200, 101)});
  EXPECT_GT(r.summary.e2e_s.mean, p.summary.e2e_s.mean);  // each step computes 1 + K tokens
  EXPECT_EQ(r.records[0].output_tokens, p.records[0].output_tokens);
}

// The gate (engine/speculation_gate.h) runs in the simulator as in the server: the
// modelled step costs feed its cost fit, and drafts that never pay are paused.
TEST(SimSpeculation, TheGatePausesDraftsThatDoNotPay) {
  const SimResult r = run_one(0.0, 4);
  const SimResult always = run_one(0.0, 4, /*gate=*/false);
  ASSERT_TRUE(r.summary.speculation && always.summary.speculation);
  EXPECT_EQ(always.summary.speculation->verify_steps, 100);
  EXPECT_EQ(always.summary.speculation->pauses, 0);
  // A first window of 8 drafts (one step of 4, four of 1: a failing request drafts
  // one at a time), a pause of 32 steps, a probe of 8, a pause of 64 (cut short by
  // max_tokens).
  EXPECT_EQ(r.summary.speculation->pauses, 2);
  EXPECT_EQ(r.summary.speculation->verify_steps, 5 + 8);
  // Proposals: at arrival and after each of the 100 steps before the last token.
  EXPECT_EQ(r.summary.speculation->paused_steps, 101 - 13);
  // A batch-1 decode on the A100 is bandwidth-bound: the drafts cost (almost) nothing.
  EXPECT_LE(r.summary.e2e_s.mean, always.summary.e2e_s.mean);
  EXPECT_EQ(r.records[0].output_tokens, always.records[0].output_tokens);
  // Drafts that are accepted now and then pay there, so they are never paused.
  const SimResult some = run_one(0.3, 4);
  ASSERT_TRUE(some.summary.speculation);
  EXPECT_EQ(some.summary.speculation->pauses, 0);
}

// `--draft-cost S`: a modelled draft model spends S seconds per proposed token
// between steps; the virtual clock moves by it, and the gate counts it.
TEST(SimSpeculation, ADraftModelsCostDelaysTheRequestAndRaisesTheBreakEven) {
  SimSetup s = small_setup("sarathi");
  s.speculate_acceptance = 1.0;
  s.draft_tokens = 4;
  const SimResult free = run_simulation(s, {entry("a", 0, 200, 101)});
  s.draft_cost_s = 0.002;
  const SimResult costly = run_simulation(s, {entry("a", 0, 200, 101)});
  ASSERT_TRUE(free.summary.speculation && costly.summary.speculation);
  EXPECT_EQ(costly.summary.speculation->draft_tokens, 80);  // as CertainAcceptance...: every proposal verified
  EXPECT_NEAR(costly.summary.e2e_s.mean - free.summary.e2e_s.mean, 80 * 0.002, 1e-9);
  // Drafts accepted half the time pay when free, not when each costs a long step.
  s.speculate_acceptance = 0.5;
  s.draft_cost_s = 0;
  const SimResult half_free = run_simulation(s, {entry("a", 0, 200, 101)});
  s.draft_cost_s = 0.05;
  const SimResult half_costly = run_simulation(s, {entry("a", 0, 200, 101)});
  ASSERT_TRUE(half_free.summary.speculation && half_costly.summary.speculation);
  EXPECT_EQ(half_free.summary.speculation->pauses, 0);
  EXPECT_GT(half_costly.summary.speculation->pauses, 0);
  EXPECT_EQ(half_costly.records[0].output_tokens, half_free.records[0].output_tokens);
}

TEST(SimSpeculation, PartialAcceptanceIsSeededAndNearItsExpectation) {
  const SimResult a = run_one(0.6, 3), b = run_one(0.6, 3);
  ASSERT_TRUE(a.summary.speculation && b.summary.speculation);
  EXPECT_EQ(a.summary.speculation->accepted_tokens, b.summary.speculation->accepted_tokens);
  EXPECT_EQ(a.summary.e2e_s.mean, b.summary.e2e_s.mean);
  // The engine proposes one draft more than the last step accepted (at most K), so
  // the draft count is a Markov chain; its stationary mean of 1 + accepted:
  const double p = 0.6;
  const int K = 3;
  std::vector<double> pi(K + 1, 0.0);
  pi[K] = 1;
  double expected = 0;
  for (int it = 0; it < 200; ++it) {
    std::vector<double> next(K + 1, 0.0);
    expected = 0;
    for (int k = 1; k <= K; ++k)
      for (int a = 0; a <= k; ++a) {
        const double pa = a < k ? std::pow(p, a) * (1 - p) : std::pow(p, k);
        next[std::min(a + 1, K)] += pi[k] * pa;
        expected += pi[k] * pa * (1 + a);
      }
    pi = next;
  }
  const double per_step = 1.0 + double(a.summary.speculation->accepted_tokens) / a.summary.speculation->verify_steps;
  EXPECT_NEAR(per_step, expected, 0.3);
}

TEST(SimSpeculation, SummaryJsonReportsAcceptanceAndTokensPerStep) {
  MetricsSummary m;
  EXPECT_FALSE(summary_json(m).contains("speculation"));
  m.speculation = SpeculationCounts{10, 40, 30, 2, 48};
  const auto j = summary_json(m)["speculation"];
  EXPECT_EQ(j["verify_steps"], 10);
  EXPECT_EQ(j["draft_tokens"], 40);
  EXPECT_EQ(j["accepted_tokens"], 30);
  EXPECT_DOUBLE_EQ(j["acceptance_rate"].get<double>(), 0.75);
  EXPECT_DOUBLE_EQ(j["tokens_per_step"].get<double>(), 4.0);
  EXPECT_EQ(j["pauses"], 2);
  EXPECT_EQ(j["paused_steps"], 48);
}

TEST(SimSpeculation, FlagsAreChecked) {
  SimOptions o;
  o.model = "Llama-2-7B";
  o.speculate = "ngram";
  EXPECT_THROW(make_sim_setup(o), Error);  // the simulator needs the acceptance
  o.speculate_acceptance = 1.5;
  EXPECT_THROW(make_sim_setup(o), Error);
  o.speculate_acceptance = 0.7;
  o.draft_tokens = 5;
  const SimSetup s = make_sim_setup(o);
  EXPECT_EQ(s.speculate_acceptance, 0.7);
  EXPECT_EQ(s.draft_tokens, 5);
}

}  // namespace
}  // namespace seer
