// `seer perplexity` and `seer bench model` as a user runs them on a model file.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;

std::string tiny_model() {
  static const std::string path = [] {
    const std::string p = scratch_dir() + "/model-cli-tiny.gguf";
    auto r = run_seer({"make-model", "--shape", "tiny", "--type", "q8_0", "--seed", "3", "-q", "--out", p});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }();
  return path;
}

TEST(PerplexityCli, JsonHasTheRunningValuePerChunk) {
  const std::string text = scratch_dir() + "/ppl.txt";
  std::ofstream(text) << std::string(4000, 'a') + " the quick brown fox jumps over the lazy dog\n";
  auto r = run_seer({"perplexity", "-m", tiny_model(), "-f", text, "--ctx", "64", "--chunks", "3", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["ctx"], 64);
  ASSERT_EQ(doc["chunks"].size(), 3u);
  EXPECT_EQ(doc["chunks"][2], doc["perplexity"]);
  EXPECT_EQ(doc["scored"], 3 * 31);
  EXPECT_GT(doc["perplexity"].get<double>(), 1.0);
  EXPECT_NE(r.err.find("Final estimate: PPL = "), std::string::npos) << r.err;
}

TEST(PerplexityCli, TooShortATextIsAClearError) {
  const std::string text = scratch_dir() + "/short.txt";
  std::ofstream(text) << "too short";
  auto r = run_seer({"perplexity", "-m", tiny_model(), "-f", text, "--ctx", "64"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("needs at least 128 tokens"), std::string::npos) << r.err;
}

TEST(BenchModelCli, OneJsonRowPerCase) {
  auto r = run_seer({"bench", "model", "-m", tiny_model(), "-p", "32", "-n", "8", "--npp", "16", "--ntg", "4", "--npl",
                     "2,3", "-r", "1", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(lines, line);) rows.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[0]["test"], "pp32");
  EXPECT_GT(rows[0]["prompt_tokens_per_s"].get<double>(), 0);
  EXPECT_EQ(rows[1]["test"], "tg8");
  EXPECT_GT(rows[1]["gen_tokens_per_s"].get<double>(), 0);
  EXPECT_EQ(rows[3]["test"], "batched");
  EXPECT_EQ(rows[3]["parallel"], 3);
  EXPECT_GT(rows[3]["gen_tokens_per_s"].get<double>(), 0);
}

}  // namespace
}  // namespace seer
