// `--kv-type q8_0` / `q4_0` as a user gives it: accepted where the head dimension is a
// multiple of 32, a clear error where it is not and for an unknown type.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <nlohmann/json.hpp>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;

// tiny with 2 heads: head dimension 32.
std::string hd32_model() {
  static const std::string path = [] {
    const std::string p = scratch_dir() + "/kv-q8-hd32.gguf";
    auto r = run_seer({"make-model", "--shape", "tiny", "--heads", "2", "--kv-heads", "1", "--type", "q8_0", "--seed",
                       "4", "-q", "--out", p});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }();
  return path;
}

TEST(KvTypeCli, GenerateAcceptsQ8_0) {
  auto r = run_seer({"generate", "-m", hd32_model(), "-p", "hello there", "-n", "12", "--temp", "0", "--ignore-eos",
                     "--kv-type", "q8_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

TEST(KvTypeCli, GenerateAcceptsQ4_0) {
  auto r = run_seer({"generate", "-m", hd32_model(), "-p", "hello there", "-n", "12", "--temp", "0", "--ignore-eos",
                     "--kv-type", "q4_0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(r.out.empty());
}

TEST(KvTypeCli, PerplexityWithQ8_0AndQ4_0IsCloseToF16) {
  const std::string text = scratch_dir() + "/kv-q8-ppl.txt";
  {
    std::ofstream out(text);
    for (int i = 0; i < 40; ++i) out << "the quick brown fox jumps over the lazy dog " << i << "\n";
  }
  double ppl[3];
  const char* types[3] = {"f16", "q8_0", "q4_0"};
  for (int i = 0; i < 3; ++i) {
    auto r = run_seer({"perplexity", "-m", hd32_model(), "-f", text, "--ctx", "128", "--chunks", "2", "--json",
                       "--kv-type", types[i]});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ppl[i] = nlohmann::json::parse(r.out)["perplexity"].get<double>();
  }
  EXPECT_NEAR(ppl[1] / ppl[0], 1.0, 0.01) << "f16 " << ppl[0] << ", q8_0 " << ppl[1];
  // q4_0 rounds 16x coarser: +2.0 % measured on this model (q8_0 +0.1 %).
  EXPECT_NEAR(ppl[2] / ppl[0], 1.0, 0.05) << "f16 " << ppl[0] << ", q4_0 " << ppl[2];
}

TEST(KvTypeCli, UnknownTypeIsAClearError) {
  auto r = run_seer({"generate", "-m", hd32_model(), "-p", "hi", "-n", "2", "--kv-type", "q4"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--kv-type must be f32, f16, bf16, q8_0 or q4_0, got 'q4'"), std::string::npos) << r.err;
}

TEST(KvTypeCli, HeadDimensionNotAMultipleOf32IsAClearError) {
  const std::string p = scratch_dir() + "/kv-q8-hd16.gguf";  // tiny: 4 heads of 16
  ASSERT_EQ(run_seer({"make-model", "--shape", "tiny", "--seed", "4", "-q", "--out", p}).exit_code, 0);
  for (const char* type : {"q8_0", "q4_0"}) {
    auto r = run_seer({"generate", "-m", p, "-p", "hi", "-n", "2", "--kv-type", type});
    EXPECT_EQ(r.exit_code, 1) << type;
    EXPECT_NE(r.err.find("head dimension is 16"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace seer
