#include <gtest/gtest.h>

#include "sim/capacity.h"
#include "sim/sweep.h"

namespace seer {
namespace {

// A system whose P99 TBT grows with the rate and crosses 0.1 s at 7.3 req/s.
MetricsSummary fake_run(double rate) {
  MetricsSummary s;
  s.requests = 100;
  s.tbt_s.p99 = 0.1 * rate / 7.3;
  s.scheduling_delay_p50_s = 0.1;
  return s;
}

TEST(Capacity, BracketsThenBisectsToTheBoundary) {
  for (double start : {0.5, 1.0, 20.0, 7.3}) {
    int probes = 0;
    auto r = find_capacity(fake_run, {0.1, 2.0}, start, 0.01, 40, [&](const CapacityProbe&) { ++probes; });
    EXPECT_LE(r.capacity, 7.3 + 1e-9) << start;
    EXPECT_GE(r.capacity, 7.3 * 0.99) << start;
    EXPECT_EQ(probes, static_cast<int>(r.probes.size()));
    for (const auto& p : r.probes) EXPECT_EQ(p.meets, p.rate <= 7.3 + 1e-12) << p.rate;
  }
}

TEST(Capacity, MedianSchedulingDelayIsPartOfTheSlo) {
  MetricsSummary s = fake_run(1.0);
  EXPECT_TRUE(meets_capacity_slo(s, {0.1, 2.0}));
  s.scheduling_delay_p50_s = 2.5;
  EXPECT_FALSE(meets_capacity_slo(s, {0.1, 2.0}));
  auto r = find_capacity([](double) { return MetricsSummary{}; }, {0.1, 2.0}, 1.0, 0.05, 10);
  EXPECT_EQ(r.capacity, 0.0);  // nothing ever meets it
  EXPECT_EQ(r.probes.size(), 10u);
}

TEST(Capacity, SloAttainmentBoundMakesItAGoodputSearch) {
  CapacityCriteria goodput{0.1, 2.0, 0.9};
  MetricsSummary s = fake_run(1.0);
  EXPECT_FALSE(meets_capacity_slo(s, goodput));  // no SLOs in the trace: nothing to attain
  s.slo_attainment = 0.95;
  EXPECT_TRUE(meets_capacity_slo(s, goodput));
  s.slo_attainment = 0.85;
  EXPECT_FALSE(meets_capacity_slo(s, goodput));
  // Attainment falls with the rate and crosses 90 % at 4: the search finds it.
  auto run = [](double rate) {
    MetricsSummary m = fake_run(rate);
    m.slo_attainment = rate <= 4.0 ? 0.95 : 0.5;
    return m;
  };
  auto r = find_capacity(run, goodput, 1.0, 0.01, 40);
  EXPECT_LE(r.capacity, 4.0);
  EXPECT_GE(r.capacity, 4.0 * 0.99);
}

TEST(Sweep, RunsEveryPolicyAndRateAndPlotsThem) {
  std::vector<std::string> calls;
  auto points = run_sweep({"orca", "vllm"}, {1, 2, 4}, [&](const std::string& p, double r) {
    calls.push_back(p);
    MetricsSummary s;
    s.policy = p;
    s.e2e_s.p50 = r * (p == "orca" ? 2 : 1);
    s.e2e_s.p99 = 2 * s.e2e_s.p50;
    s.normalized_latency_s.p99 = 0.01 * r;
    s.tbt_s.p99 = 0.02;
    return s;
  });
  ASSERT_EQ(points.size(), 6u);
  EXPECT_EQ(calls, (std::vector<std::string>{"orca", "orca", "orca", "vllm", "vllm", "vllm"}));
  auto j = sweep_json("t", points);
  ASSERT_EQ(j["points"].size(), 6u);
  EXPECT_EQ(j["points"][4]["policy"], "vllm");
  EXPECT_DOUBLE_EQ(j["points"][4]["rate"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(j["points"][4]["summary"]["e2e_s"]["p50"].get<double>(), 2.0);
  std::string svg = sweep_svg("t", points);
  size_t lines = 0;
  for (size_t p = svg.find("<polyline"); p != std::string::npos; p = svg.find("<polyline", p + 1)) ++lines;
  EXPECT_EQ(lines, 8u);  // 4 panels x 2 policies
  EXPECT_NE(svg.find("TBT P99"), std::string::npos);
}

}  // namespace
}  // namespace seer
