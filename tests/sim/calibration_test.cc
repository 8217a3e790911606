#include <gtest/gtest.h>

#include "calibration/cpu_calibration.h"
#include "sim/calibration_fit.h"
#include "sim/iteration_log_check.h"
#include "support/test_paths.h"

namespace seer {
namespace {

std::vector<MeasuredIteration> shapes() {
  std::vector<MeasuredIteration> out;
  for (int t : {16, 64, 256, 512}) out.push_back({{{{t, 0, true}}}, 0, "prefill"});
  out.push_back({{{{128, 512, true}}}, 0, "chunk"});
  for (int ctx : {64, 512, 1500})
    for (int b : {1, 4, 16}) {
      MeasuredIteration m;
      m.shape.chunks.assign(b, ChunkShape{1, ctx, true});
      out.push_back(m);
    }
  return out;
}

// A machine whose factors the fits below must recover from its own timings.
HardwareSpec known_machine() {
  HardwareSpec truth;
  truth.name = "cpu";
  truth.memory_bytes = int64_t{16} << 30;
  truth.memory_bandwidth = 20e9;
  truth.peak_flops = 200e9;
  truth.host_link_bandwidth = 20e9;
  truth.interconnect_bandwidth = 20e9;
  truth.iteration_overhead_s = 3e-4;
  truth.efficiency = {0.7, 0.35, 0.25, 0.15, 1.0, 1.0};
  return truth;
}

CostModelOptions f32_weights() {
  CostModelOptions opts;
  opts.weight_bytes_per_param = 4;
  return opts;
}

const ModelSpec kSmallModel{"small", 12, 768, 12, 12, 64, 2048, 32000, 2048, true, false};

TEST(CalibrationFit, RecoversTheTimesOfAKnownMachine) {
  const ModelSpec& m = kSmallModel;
  const HardwareSpec truth = known_machine();
  const CostModelOptions opts = f32_weights();
  auto samples = shapes();
  CostModel truth_model(m, truth, opts);
  for (auto& s : samples) s.seconds = truth_model.iteration_time(s.shape);

  HardwareSpec start = truth;
  start.efficiency = {0.5, 0.5, 0.5, 0.5, 1.0, 1.0};
  start.iteration_overhead_s = 1e-4;
  FitError before = model_error(CostModel(m, start, opts), samples);
  HardwareSpec fitted = fit_efficiency(m, start, opts, samples);
  FitError after = model_error(CostModel(m, fitted, opts), samples);
  EXPECT_GT(before.mean_relative, 0.1);
  EXPECT_LT(after.mean_relative, 0.01);
  EXPECT_LT(after.max_relative, 0.03);
  EXPECT_NEAR(fitted.efficiency.memory, 0.7, 0.05);
  EXPECT_NEAR(fitted.efficiency.compute, 0.35, 0.03);
  EXPECT_EQ(fitted.memory_bandwidth, truth.memory_bandwidth);  // peaks are kept
}

TEST(CalibrationFit, RecoversEachRegimesOverlapAndFactors) {
  const ModelSpec& m = kSmallModel;
  HardwareSpec truth = known_machine();
  truth.efficiency = {1.0, 1.0, 0.25, 0.15, 1.0, 1.0};
  truth.linear_regimes = {{1, 0.8, 0.05, 3.0}, {32, 0.3, 0.7, 1.0}};
  CostModelOptions opts;
  opts.weight_bytes_per_param = 1.0625;
  auto samples = shapes();
  for (int b : {2, 8, 32, 48}) {
    MeasuredIteration s;
    s.shape.chunks.assign(b, ChunkShape{1, 256, true});
    samples.push_back(s);
  }
  CostModel truth_model(m, truth, opts);
  for (auto& s : samples) s.seconds = truth_model.iteration_time(s.shape);

  HardwareSpec start = truth;
  start.efficiency = {0.5, 0.5, 0.5, 0.5, 1.0, 1.0};
  start.linear_regimes = {{1, 0.5, 0.5, 2.0}, {32, 0.5, 0.5, 1.0}};
  HardwareSpec fitted = fit_efficiency(m, start, opts, samples);
  EXPECT_LT(model_error(CostModel(m, fitted, opts), samples).mean_relative, 0.01);
  ASSERT_EQ(fitted.linear_regimes.size(), 2u);
  EXPECT_NEAR(fitted.linear_regimes[0].overlap, 3.0, 0.3);
  EXPECT_NEAR(fitted.linear_regimes[1].overlap, 1.0, 0.1);
  EXPECT_EQ(fitted.linear_regimes[1].min_tokens, 32);
  EXPECT_NEAR(fitted.linear_regimes[0].compute, 0.05, 0.005);
}

// Quantized weights on int8 kernels run their GEMMs faster than the f32 peak the compute
// factor is relative to: the fit must be able to follow them above 1.
TEST(CalibrationFit, FollowsLinearLayersFasterThanTheF32Peak) {
  const ModelSpec& m = kSmallModel;
  HardwareSpec truth = known_machine();
  truth.efficiency = {1.0, 1.0, 0.25, 0.15, 1.0, 1.0};
  truth.linear_regimes = {{1, 0.5, 2.5, 1.0}};
  CostModelOptions opts;
  opts.weight_bytes_per_param = 1.0625;
  auto samples = shapes();
  CostModel truth_model(m, truth, opts);
  for (auto& s : samples) s.seconds = truth_model.iteration_time(s.shape);
  HardwareSpec start = truth;
  start.linear_regimes = {{1, 0.5, 1.0, 1.0}};
  HardwareSpec fitted = fit_efficiency(m, start, opts, samples);
  EXPECT_LT(model_error(CostModel(m, fitted, opts), samples).mean_relative, 0.01);
  EXPECT_NEAR(fitted.linear_regimes[0].compute, 2.5, 0.1);
}

// Decode steps the model fits exactly, one in five 30 % slower (a hiccup no shape
// explains): the per-iteration fit follows the many and comes out low in the sum;
// matching the total must take the sum to the measured one.
TEST(CalibrationFit, MatchingTheTotalRemovesTheBiasOfAnUnevenWorkload) {
  const ModelSpec& m = kSmallModel;
  const HardwareSpec truth = known_machine();
  const CostModelOptions opts = f32_weights();
  const CostModel truth_model(m, truth, opts);
  std::vector<MeasuredIteration> samples;
  for (int i = 0; i < 40; ++i) {
    MeasuredIteration s;
    s.shape.chunks.assign(1 + i % 8, ChunkShape{1, 100 + 10 * i, true});
    s.seconds = (i % 5 == 0 ? 1.3 : 1.0) * truth_model.iteration_time(s.shape);
    samples.push_back(s);
  }
  auto total_error = [&](const HardwareSpec& hw) {
    return check_iterations(CostModel(m, hw, opts), samples).back().total_relative;
  };
  const HardwareSpec per_iteration = fit_efficiency(m, truth, opts, samples);
  const HardwareSpec matched = fit_efficiency(m, truth, opts, samples, /*match_total_time=*/true);
  EXPECT_LT(total_error(per_iteration), -0.03);
  EXPECT_NEAR(total_error(matched), 0.0, 1e-4);
  // The price: a slightly larger error per iteration, still small.
  const double matched_mean = model_error(CostModel(m, matched, opts), samples).mean_relative;
  EXPECT_GE(matched_mean, model_error(CostModel(m, per_iteration, opts), samples).mean_relative);
  EXPECT_LT(matched_mean, 0.1);
}

TEST(Calibrate, MeasuresTheCpuBackendOnARealModel) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  CalibrateOptions o;
  o.model_path = model;
  o.quick = true;
  o.repeats = 2;
  CalibrationResult r = calibrate_cpu(o);
  EXPECT_EQ(r.model.layers, 5);
  ASSERT_EQ(r.samples.size(), 4u);
  for (const auto& s : r.samples) EXPECT_GT(s.seconds, 0) << s.label;
  EXPECT_GT(r.cpu.memory_bandwidth, 1e8);
  EXPECT_GT(r.cpu.peak_flops, 1e8);
  EXPECT_NEAR(r.cost.weight_bytes_per_param, 4.0, 0.01);  // F32 weights
  EXPECT_LE(r.error_after.mean_relative, r.error_before.mean_relative + 1e-12);
  EXPECT_EQ(r.cpu.name, "cpu");
  // F32 weights: one-row dots up to 2 rows, tiles up to the GEMM from 8 rows.
  ASSERT_EQ(r.cpu.linear_regimes.size(), 3u);
  EXPECT_EQ(r.cpu.linear_regimes[1].min_tokens, 3);
  EXPECT_EQ(r.cpu.linear_regimes[2].min_tokens, 8);
  EXPECT_NE(r.cpu.description.find("stories"), std::string::npos) << r.cpu.description;
}

}  // namespace
}  // namespace seer
