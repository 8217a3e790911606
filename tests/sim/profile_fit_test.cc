#include "sim/profile_fit.h"

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>

#include "common/error.h"
#include "sim/profile_holdout.h"
#include "support/test_paths.h"

namespace seer {
namespace {

namespace fs = std::filesystem;

// Profiles of a few catalog models whose every point is what the cost model predicts
// with `hw`: a fit from another start must find `hw`'s factors again.
std::vector<BlockProfile> synthetic_profiles(const Catalog& catalog, const HardwareSpec& hw) {
  std::vector<BlockProfile> out;
  for (const auto& [name, tp] : std::vector<std::pair<std::string, int>>{
           {"Llama-2-7B", 1}, {"Llama-2-7B", 4}, {"Llama-2-70B", 2}, {"Llama-2-70B", 8}, {"phi-2", 1}}) {
    BlockProfile b;
    b.device = "a100";
    b.hardware = hw.name;
    b.profile_model = name;
    b.model = &catalog.model(name);
    b.tp = tp;
    CostModelOptions o;
    o.tp = tp;
    o.check_fits = false;
    const CostModel cost(*b.model, hw, o);
    for (double tokens = 1; tokens <= 4096; tokens *= 2) {
      BlockPoint p;
      p.tokens = tokens;
      p.has_op.fill(true);
      p.measured_s = cost.layer_time(tokens);
      b.points.push_back(p);
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::vector<const BlockProfile*> pointers(const std::vector<BlockProfile>& profiles, const std::string& device) {
  std::vector<const BlockProfile*> out;
  for (const auto& b : profiles)
    if (b.device == device) out.push_back(&b);
  return out;
}

TEST(ProfileFit, RecoversTheFactorsThatGeneratedTheRows) {
  const Catalog catalog = Catalog::load(Catalog::default_dir());
  HardwareSpec truth = catalog.hardware("A100-80GB");
  truth.efficiency.memory = 0.9;
  truth.efficiency.compute = 0.7;
  truth.efficiency.elementwise = 0.3;
  truth.kernel_latency_s = 9e-6;
  const auto profiles = synthetic_profiles(catalog, truth);
  const HardwareSpec fitted = fit_block_factors(with_start_factors(truth), pointers(profiles, "a100"));
  EXPECT_NEAR(fitted.efficiency.memory, 0.9, 0.009);
  EXPECT_NEAR(fitted.efficiency.compute, 0.7, 0.007);
  EXPECT_NEAR(fitted.efficiency.elementwise, 0.3, 0.003);
  EXPECT_NEAR(fitted.kernel_latency_s, 9e-6, 0.09e-6);
  EXPECT_LT(block_time_error(fitted, pointers(profiles, "a100")).mean_relative, 0.002);
  // Nothing else moves.
  EXPECT_EQ(fitted.efficiency.attention_memory, truth.efficiency.attention_memory);
  EXPECT_EQ(fitted.memory_bandwidth, truth.memory_bandwidth);
}

TEST(ProfileFit, RefusesNoPointsAndKernelRegimes) {
  const Catalog catalog = Catalog::load(Catalog::default_dir());
  EXPECT_THROW(fit_block_factors(catalog.hardware("A100-80GB"), {}), Error);
  const auto profiles = synthetic_profiles(catalog, catalog.hardware("A100-80GB"));
  EXPECT_THROW(fit_block_factors(catalog.hardware("cpu"), pointers(profiles, "a100")), Error);
}

// The fit behind the catalog, run again from the neutral start on all A100 rows of
// Vidur's profiles: it lands at least as low as the catalog's hand-run fit, and near
// its factors (docs/simulator.md).
TEST(ProfileFit, FitOnAllA100RowsMatchesTheCatalog) {
  SEER_REQUIRE_SHARED_FILE(license, "gpu-profiles/vidur/LICENSE");
  const Catalog catalog = Catalog::load(Catalog::default_dir());
  const auto profiles = read_block_profiles(fs::path(license).parent_path().string(), catalog);
  const auto a100 = pointers(profiles, "a100");
  ASSERT_EQ(a100.size(), 29u);
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  const HardwareSpec fitted = fit_block_factors(with_start_factors(hw), a100);
  const double catalog_error = block_time_error(hw, a100).mean_relative;
  const double fitted_error = block_time_error(fitted, a100).mean_relative;
  std::printf("A100, all rows: fitted memory %.3f compute %.3f elementwise %.3f floor %.2f us, error %.4f; "
              "catalog %.2f %.2f %.2f %.2f us, error %.4f\n",
              fitted.efficiency.memory, fitted.efficiency.compute, fitted.efficiency.elementwise,
              1e6 * fitted.kernel_latency_s, fitted_error, hw.efficiency.memory, hw.efficiency.compute,
              hw.efficiency.elementwise, 1e6 * hw.kernel_latency_s, catalog_error);
  EXPECT_LE(fitted_error, catalog_error + 1e-9);
  EXPECT_GT(fitted_error, catalog_error - 0.002);  // the same minimum, not a better one
  EXPECT_NEAR(fitted.efficiency.memory, hw.efficiency.memory, 0.03);
  EXPECT_NEAR(fitted.efficiency.compute, hw.efficiency.compute, 0.03);
  EXPECT_NEAR(fitted.efficiency.elementwise, hw.efficiency.elementwise, 0.03);
  EXPECT_NEAR(fitted.kernel_latency_s, hw.kernel_latency_s, 0.5e-6);
}

TEST(HoldOut, ParsesModelAndTpItems) {
  const HoldOut h = parse_hold_out({"model:Llama-2-7B,tp:2", "tp:4"});
  EXPECT_EQ(h.models, std::vector<std::string>{"Llama-2-7B"});
  EXPECT_EQ(h.tps, (std::vector<int>{2, 4}));
  EXPECT_EQ(h.label(), "model:Llama-2-7B,tp:2,tp:4");
  for (const char* bad : {"Llama-2-7B", "tp:two", "model:", "layer:3", ","})
    EXPECT_THROW(parse_hold_out({bad}), Error) << bad;
  EXPECT_EQ(parse_cross_validate("models"), CrossValidate::Models);
  EXPECT_THROW(parse_cross_validate("devices"), Error);
}

TEST(HoldOut, FitsWithoutTheHeldOutRowsAndReportsTheirError) {
  const Catalog catalog = Catalog::load(Catalog::default_dir());
  HardwareSpec truth = catalog.hardware("A100-80GB");
  truth.efficiency.compute = 0.7;
  const auto profiles = synthetic_profiles(catalog, truth);
  // Rows from one set of factors: the factors fitted on the others predict the held-out rows.
  const HoldOutValidation v = validate_held_out(profiles, catalog, parse_hold_out({"model:llama-2-70b"}));
  ASSERT_EQ(v.folds.size(), 1u);
  const HoldOutFold& f = v.folds[0];
  EXPECT_EQ(f.held_fitted.points, 2 * 13);
  EXPECT_EQ(f.train_fitted.points, 3 * 13);
  EXPECT_EQ(f.combinations.size(), 2u);
  EXPECT_LT(f.held_fitted.mean_relative, 0.005);
  EXPECT_GT(f.held_catalog.mean_relative, 0.01);  // the catalog's compute is not 0.7
  ASSERT_EQ(v.devices.size(), 1u);
  EXPECT_EQ(v.devices[0].combinations, 2);

  EXPECT_THROW(validate_held_out(profiles, catalog, parse_hold_out({"model:Qwen-72B"})), Error);
  EXPECT_THROW(validate_held_out(profiles, catalog, parse_hold_out({"tp:1,tp:2,tp:4,tp:8"})), Error);

  const HoldOutValidation cv = cross_validate(profiles, catalog, CrossValidate::Models);
  EXPECT_EQ(cv.folds.size(), 3u);  // Llama-2-7B, Llama-2-70B, phi-2
  EXPECT_EQ(cv.devices[0].combinations, 5);
  EXPECT_EQ(cross_validate(profiles, catalog, CrossValidate::Tp).folds.size(), 4u);
  EXPECT_NE(render_held_out_table(cv).find("held err"), std::string::npos);
  EXPECT_EQ(held_out_json(cv)["folds"].size(), 3u);
}

}  // namespace
}  // namespace seer
