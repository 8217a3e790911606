// `seer predict train|eval` as a user runs them, on a small data dir built here
// (synthetic Alpaca and ShareGPT files, and the Llama-2 tokenizer of ../shared).
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using testing::run_seer;
using testing::scratch_dir;

// <scratch>/data with alpaca/, sharegpt/ and tokenizer-tests/ (a link to the real
// tokenizer); "" when ../shared has no tokenizer.
std::string small_data_dir() {
  const std::string tok = testing::shared_data_file("tokenizer-tests/ggml-vocab-llama-spm.gguf");
  if (tok.empty()) return "";
  const fs::path dir = fs::path(scratch_dir()) / "data";
  fs::create_directories(dir / "alpaca");
  fs::create_directories(dir / "sharegpt");
  fs::create_directories(dir / "tokenizer-tests");
  std::error_code ec;
  fs::create_symlink(tok, dir / "tokenizer-tests" / "ggml-vocab-llama-spm.gguf", ec);
  json alpaca = json::array(), sharegpt = json::array();
  for (int i = 0; i < 200; ++i) {
    const bool long_answer = i % 4 == 0;
    std::string answer = long_answer ? "" : "Yes.";
    for (int w = 0; long_answer && w < 300; ++w) answer += "word ";
    alpaca.push_back({{"instruction", long_answer ? "Write a long essay about topic " + std::to_string(i)
                                                  : "Answer yes or no: question " + std::to_string(i)},
                      {"input", ""},
                      {"output", answer}});
    sharegpt.push_back({{"id", "c" + std::to_string(i)},
                        {"conversations", json::array({{{"from", "human"}, {"value", "hello " + std::to_string(i)}},
                                                       {{"from", "gpt"}, {"value", answer}}})}});
  }
  std::ofstream(dir / "alpaca" / "alpaca_data.json") << alpaca.dump();
  std::ofstream(dir / "sharegpt" / "sharegpt_sample_1000_plain.json") << sharegpt.dump();
  return dir.string();
}

TEST(PredictCli, TrainThenEvalPrintsExactlyTheIssueKeys) {
  const std::string data = small_data_dir();
  if (data.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  const std::string model = scratch_dir() + "/alpaca.seerlp";
  auto t = run_seer({"predict", "train", "--dataset", "alpaca", "--data-dir", data, "--out", model, "--max-len", "512",
                     "--buckets", "8", "--seed", "3", "--hash-bits", "12"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.err.find("trained fine-lr on 160 alpaca prompts (40 held out)"), std::string::npos) << t.err;

  auto e = run_seer({"predict", "eval", "--predictor", model, "--dataset", "alpaca", "--data-dir", data, "--json"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  json j = json::parse(e.out);
  std::set<std::string> keys;
  for (const auto& [k, v] : j.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"dataset", "test_requests", "buckets", "bucket_width", "accuracy",
                                         "mean_bucket_distance", "mae_tokens", "baseline_majority_accuracy",
                                         "baseline_mean_mae_tokens", "accuracy_width_32",
                                         "baseline_majority_accuracy_width_32", "predict_time_ms_mean"}));
  EXPECT_EQ(j["dataset"], "alpaca");
  EXPECT_EQ(j["test_requests"], 40);
  EXPECT_EQ(j["buckets"], 8);
  EXPECT_EQ(j["bucket_width"], 64);
  EXPECT_GT(j["accuracy"].get<double>(), j["baseline_majority_accuracy"].get<double>());  // separable by design
  EXPECT_LT(j["mae_tokens"].get<double>(), j["baseline_mean_mae_tokens"].get<double>());

  const std::string errors = scratch_dir() + "/errors.json";
  auto table = run_seer({"predict", "eval", "--predictor", model, "--data-dir", data, "--errors-out", errors});
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_NE(table.out.find("bucket accuracy, 32-token buckets"), std::string::npos) << table.out;
  EXPECT_TRUE(json::parse(testing::slurp(errors)).contains("offsets"));
}

TEST(PredictCli, ShareGptTrainsAndEvaluates) {
  const std::string data = small_data_dir();
  if (data.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  const std::string model = scratch_dir() + "/sharegpt.seerlp";
  auto t = run_seer({"predict", "train", "--dataset", "sharegpt", "--data-dir", data, "--out", model, "--model",
                     "log-reg", "--hash-bits", "12"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto e = run_seer({"predict", "eval", "--predictor", model, "--data-dir", data, "--json"});
  ASSERT_EQ(e.exit_code, 0) << e.err;
  EXPECT_EQ(json::parse(e.out)["dataset"], "sharegpt");
}

// `seer trace --held-out-of FILE` draws only the prompts FILE's training run held
// out (its 80/20 split at its seed), and refuses a file trained on other text.
TEST(PredictCli, TracesHeldOutOfAPredictorUseOnlyItsTestPrompts) {
  const std::string data = small_data_dir();
  if (data.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  const std::string model = scratch_dir() + "/sharegpt-heldout.seerlp";
  auto t = run_seer({"predict", "train", "--dataset", "sharegpt", "--data-dir", data, "--out", model, "--seed", "4",
                     "--hash-bits", "12"});
  ASSERT_EQ(t.exit_code, 0) << t.err;
  auto tr = run_seer({"trace", "--lengths", "sharegpt-chat", "--data-dir", data, "--held-out-of", model, "--num",
                      "400", "--rate", "2", "--out", "-"});
  ASSERT_EQ(tr.exit_code, 0) << tr.err;
  std::set<std::string> prompts;
  std::istringstream lines(tr.out);
  for (std::string line; std::getline(lines, line);) prompts.insert(json::parse(line)["prompt"].get<std::string>());
  EXPECT_EQ(prompts.size(), 40u);  // 20 % of the 200 one-turn conversations, all drawn at 400 requests

  auto wrong = run_seer({"trace", "--lengths", "alpaca", "--data-dir", data, "--held-out-of", model, "--out", "-"});
  EXPECT_EQ(wrong.exit_code, 1);
  EXPECT_NE(wrong.err.find("trained on 'sharegpt'"), std::string::npos) << wrong.err;
  auto lengths_only = run_seer({"trace", "--lengths", "synthetic", "--held-out-of", model, "--out", "-"});
  EXPECT_EQ(lengths_only.exit_code, 1);
  EXPECT_NE(lengths_only.err.find("--held-out-of applies to"), std::string::npos) << lengths_only.err;
}

TEST(PredictCli, BadInputIsAClearError) {
  const std::string data = small_data_dir();
  if (data.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  auto t = run_seer({"predict", "train", "--dataset", "pile", "--data-dir", data, "--out", scratch_dir() + "/x"});
  EXPECT_EQ(t.exit_code, 1);
  EXPECT_NE(t.err.find("--dataset 'pile'"), std::string::npos) << t.err;
  const std::string junk = scratch_dir() + "/junk.seerlp";
  std::ofstream(junk) << "not a predictor";
  auto e = run_seer({"predict", "eval", "--predictor", junk, "--data-dir", data});
  EXPECT_EQ(e.exit_code, 1);
  EXPECT_NE(e.err.find(junk), std::string::npos) << e.err;
  auto m = run_seer({"predict", "train", "--data-dir", data, "--out", scratch_dir() + "/y", "--model", "mlp"});
  EXPECT_EQ(m.exit_code, 1);
  EXPECT_NE(m.err.find("--model 'mlp'"), std::string::npos) << m.err;
}

}  // namespace
}  // namespace seer
