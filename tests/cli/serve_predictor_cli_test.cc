// `seer serve`'s predictor flags: refused up front when they cannot work, before
// anything listens.
#include <gtest/gtest.h>

#include "cli/run_seer.h"

namespace seer::testing {
namespace {

std::string tiny_model_file() {
  static const std::string path = [] {
    std::string out = scratch_dir() + "/serve_predictor_tiny.gguf";
    auto m = run_seer({"make-model", "--shape", "tiny", "--out", out, "--seed", "3"});
    EXPECT_EQ(m.exit_code, 0) << m.err;
    return out;
  }();
  return path;
}

TEST(ServePredictorCli, OracleAndBadSpecsAreRefusedNamingTheFlag) {
  auto oracle = run_seer({"serve", "--model", tiny_model_file(), "--port", "0", "--predictor", "oracle"});
  EXPECT_EQ(oracle.exit_code, 1);
  EXPECT_NE(oracle.err.find("--predictor oracle"), std::string::npos) << oracle.err;
  // The noisy oracle needs true lengths too: refused at start-up, not with a 400 per request.
  auto noisy = run_seer({"serve", "--model", tiny_model_file(), "--port", "0", "--predictor", "noisy:0.8"});
  EXPECT_EQ(noisy.exit_code, 1);
  EXPECT_NE(noisy.err.find("--predictor noisy:0.8"), std::string::npos) << noisy.err;
  auto bogus = run_seer({"serve", "--model", tiny_model_file(), "--port", "0", "--predictor", "no/such/file.pred"});
  EXPECT_EQ(bogus.exit_code, 1);
  EXPECT_NE(bogus.err.find("--predictor"), std::string::npos) << bogus.err;
  auto padding = run_seer({"serve", "--model", tiny_model_file(), "--port", "0", "--padding", "-2"});
  EXPECT_EQ(padding.exit_code, 1);
  EXPECT_NE(padding.err.find("--padding"), std::string::npos) << padding.err;
}

TEST(ServePredictorCli, PolicyS3WithoutAPredictorIsRefusedNamingTheFlag) {
  auto r = run_seer({"serve", "--model", tiny_model_file(), "--port", "0", "--policy", "s3"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--predictor"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("listening"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace seer::testing
