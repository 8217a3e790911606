#include "sim/metrics_summary.h"

#include <gtest/gtest.h>

namespace seer {
namespace {

std::vector<RequestRecord> two_requests() {
  RequestRecord a;
  a.arrival_s = 0.0;
  a.first_scheduled_s = 0.5;
  a.first_token_s = 1.0;
  a.token_times_s = {1.0, 1.5, 2.5};
  a.finish_s = 2.6;
  a.prompt_tokens = 10;
  a.output_tokens = 3;
  RequestRecord b;
  b.arrival_s = 0.5;
  b.first_scheduled_s = 1.0;
  b.first_token_s = 2.0;
  b.token_times_s = {2.0, 2.25, 3.0};
  b.finish_s = 3.0;
  b.prompt_tokens = 20;
  b.output_tokens = 3;
  return {a, b};
}

std::vector<IterationRecord> four_iterations() {
  std::vector<IterationRecord> it(4);
  it[0] = {0.1, 1e-5, 1, 10, 0.1, false};
  it[1] = {0.1, 3e-5, 2, 21, 0.3, false};
  it[2] = {0.0, 1e-6, 0, 0, 0.0, true};  // idle: left out
  it[3] = {0.1, 2e-5, 2, 2, 0.5, false};
  return it;
}

void expect_dist(const Distribution& d, double mean, double p50, double p90, double p99, double max) {
  EXPECT_NEAR(d.mean, mean, 1e-12);
  EXPECT_NEAR(d.p50, p50, 1e-12);
  EXPECT_NEAR(d.p90, p90, 1e-12);
  EXPECT_NEAR(d.p99, p99, 1e-12);
  EXPECT_NEAR(d.max, max, 1e-12);
}

TEST(MetricsSummary, PercentilesInterpolateLikeNumpy) {
  EXPECT_DOUBLE_EQ(percentile({}, 50), 0);
  EXPECT_DOUBLE_EQ(percentile({7}, 99), 7);
  EXPECT_DOUBLE_EQ(percentile({4, 1, 3, 2}, 50), 2.5);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 90), 3.7);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 100), 4);
  EXPECT_DOUBLE_EQ(percentile({1, 2, 3, 4}, 0), 1);
}

TEST(MetricsSummary, HandMadeRecordsGiveExactFigures) {
  RunTotals totals{4, 2, 1 << 20, 77};
  MetricsSummary s = summarize("vllm", two_requests(), four_iterations(), totals);
  EXPECT_EQ(s.policy, "vllm");
  EXPECT_EQ(s.requests, 2);
  EXPECT_DOUBLE_EQ(s.duration_s, 3.0);
  EXPECT_DOUBLE_EQ(s.requests_per_s, 2.0 / 3.0);
  EXPECT_DOUBLE_EQ(s.output_tokens_per_s, 2.0);
  EXPECT_DOUBLE_EQ(s.total_tokens_per_s, 12.0);
  expect_dist(s.ttft_s, 1.25, 1.25, 1.45, 1.495, 1.5);
  // Gaps 0.5, 1.0 (a) and 0.25, 0.75 (b).
  expect_dist(s.tbt_s, 0.625, 0.625, 0.925, 0.9925, 1.0);
  expect_dist(s.e2e_s, 2.55, 2.55, 2.59, 2.599, 2.6);
  expect_dist(s.normalized_latency_s, 2.55 / 3, 2.55 / 3, 2.59 / 3, 2.599 / 3, 2.6 / 3);
  EXPECT_NEAR(s.batch_size.mean, 5.0 / 3.0, 1e-12);
  EXPECT_DOUBLE_EQ(s.batch_size.max, 2);
  EXPECT_DOUBLE_EQ(s.tokens_per_iteration.mean, 11);
  EXPECT_DOUBLE_EQ(s.tokens_per_iteration.max, 21);
  EXPECT_NEAR(s.kv_utilization.mean, 0.3, 1e-12);
  EXPECT_DOUBLE_EQ(s.kv_utilization.max, 0.5);
  EXPECT_NEAR(s.scheduler_time_mean_s, 2e-5, 1e-15);
  EXPECT_NEAR(s.scheduler_time_p99_s, 2.98e-5, 1e-15);
  EXPECT_DOUBLE_EQ(s.scheduling_delay_p50_s, 0.5);
  EXPECT_EQ(s.totals.preemptions, 4);
  EXPECT_EQ(s.totals.swapped_bytes, 1 << 20);
}

TEST(MetricsSummary, JsonHasExactlyTheAgreedKeys) {
  auto j = summary_json(summarize("orca", two_requests(), four_iterations(), {}));
  std::vector<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.push_back(k);
  std::vector<std::string> expected = {"policy", "requests", "duration_s", "throughput", "ttft_s", "tbt_s", "e2e_s",
                                       "normalized_latency_s", "batch_size", "tokens_per_iteration", "kv_utilization",
                                       "preemptions", "allocation_failures", "swapped_bytes", "recomputed_tokens",
                                       "scheduler_time_per_iteration_s"};
  EXPECT_EQ(keys, expected);
  std::vector<std::string> tkeys;
  for (const auto& [k, v] : j["throughput"].items()) tkeys.push_back(k);
  EXPECT_EQ(tkeys, (std::vector<std::string>{"requests_per_s", "output_tokens_per_s", "total_tokens_per_s"}));
  for (const char* d : {"ttft_s", "tbt_s", "e2e_s", "normalized_latency_s"}) {
    std::vector<std::string> dkeys;
    for (const auto& [k, v] : j[d].items()) dkeys.push_back(k);
    EXPECT_EQ(dkeys, (std::vector<std::string>{"mean", "p50", "p90", "p99", "max"})) << d;
  }
  for (const char* d : {"batch_size", "tokens_per_iteration", "kv_utilization"}) EXPECT_EQ(j[d].size(), 2u) << d;
  EXPECT_EQ(j["scheduler_time_per_iteration_s"].size(), 2u);
  EXPECT_EQ(j["policy"], "orca");
  EXPECT_DOUBLE_EQ(j["e2e_s"]["p90"].get<double>(), 2.59);
}

TEST(MetricsSummary, EmptyRunIsAllZeros) {
  MetricsSummary s = summarize("static", {}, {}, {});
  EXPECT_EQ(s.requests, 0);
  EXPECT_EQ(s.duration_s, 0);
  EXPECT_EQ(s.requests_per_s, 0);
  EXPECT_EQ(s.tbt_s.p99, 0);
}

TEST(MetricsSummary, SloAttainmentChecksEveryBound) {
  auto r = two_requests();
  EXPECT_FALSE(slo_attainment(r).has_value());
  EXPECT_DOUBLE_EQ(*slo_attainment(r, Slo{1.2, 0, 0}), 0.5);  // b's TTFT is 1.5
  EXPECT_DOUBLE_EQ(*slo_attainment(r, Slo{0, 0.8, 0}), 0.5);  // a has a 1.0 s gap
  EXPECT_DOUBLE_EQ(*slo_attainment(r, Slo{2, 1, 3}), 1.0);
  r[1].slo.deadline_s = 2.0;  // a request's own SLO wins over the fallback
  EXPECT_DOUBLE_EQ(*slo_attainment(r, Slo{2, 1, 3}), 0.5);
}

TEST(MetricsSummary, TableShowsTheHeadlineFigures) {
  std::string t = render_summary_table(summarize("sarathi", two_requests(), four_iterations(), {3, 0, 2048, 0}));
  EXPECT_NE(t.find("policy sarathi: 2 requests"), std::string::npos) << t;
  EXPECT_NE(t.find("TTFT"), std::string::npos);
  EXPECT_NE(t.find("preemptions 3"), std::string::npos);
  EXPECT_NE(t.find("2.0 KiB"), std::string::npos) << t;
}

}  // namespace
}  // namespace seer
