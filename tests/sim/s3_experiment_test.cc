// `seer experiment s3` without the data: every policy row runs on a small offline
// workload; the table, chart and JSON carry every model x policy.
#include <gtest/gtest.h>

#include "sim/s3_experiment.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

TEST(S3Experiment, RunsEveryPolicyAndReportsEachRow) {
  S3ExperimentOptions o;
  o.models = {"GPT-J-6B"};
  o.num = 300;
  o.progress = false;
  S3Workload w;
  w.trace = testing::synthetic_trace(o.num, 1000.0, 3, 150, 120);
  for (auto& e : w.trace) e.arrival_s = 0;
  w.predictor = "noisy:0.8";
  w.predictor_label = "noisy:0.8";
  w.test_prompts = w.trace.size();
  auto rows = run_s3_experiment(o, w);
  ASSERT_EQ(rows.size(), 5u);
  std::vector<std::string> labels;
  for (const auto& r : rows) {
    labels.push_back(r.policy);
    EXPECT_EQ(r.summary.requests, o.num) << r.policy;
    EXPECT_EQ(r.summary.predictions.has_value(), r.policy.starts_with("s3")) << r.policy;
  }
  EXPECT_EQ(labels, (std::vector<std::string>{"orca", "vllm", "s3", "s3-noisy", "s3-oracle"}));
  const MetricsSummary& oracle = rows[4].summary;
  EXPECT_DOUBLE_EQ(oracle.predictions->accuracy.value_or(-1), 1.0);
  EXPECT_EQ(oracle.predictions->supervisor_preemptions, 0);

  const std::string md = s3_table_markdown(o, w, rows);
  for (const char* label : {"| orca |", "| vllm |", "| s3 |", "| s3-noisy |", "| s3-oracle |", "noisy:0.986"})
    EXPECT_NE(md.find(label), std::string::npos) << label << "\n" << md;
  const std::string svg = s3_chart_svg(o, rows);
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("s3-oracle"), std::string::npos);
  auto j = s3_rows_json(o, w, rows);
  EXPECT_EQ(j["rows"].size(), 5u);
  EXPECT_TRUE(j["rows"][2]["summary"].contains("predictions"));
}

}  // namespace
}  // namespace seer
