// `seer serve --policy s3` on the real stories260K model with a length predictor
// trained on Alpaca (a small subset, to keep the test short): concurrent requests
// whose lengths the predictor cannot know all complete, with a KV pool small enough
// that reservations compete; the prediction metrics are exported and every KV block
// is free afterwards.
#include <chrono>
#include <future>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "bench/server_metrics_probe.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "predict/length_trainer.h"
#include "predict/predictor_file.h"
#include "sim/labeled_datasets.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer::e2e {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

std::string train_small_alpaca_predictor(const std::string& alpaca_json) {
  auto records = read_alpaca(alpaca_json);
  records.resize(std::min<size_t>(records.size(), 1500));
  const std::string suffix = "/alpaca/alpaca_data.json";
  const std::string data_dir = alpaca_json.substr(0, alpaca_json.size() - suffix.size());
  auto labeled = count_tokens(records, *load_llama2_tokenizer(data_dir), false);
  std::vector<LengthExample> train;
  for (const auto& l : labeled) train.push_back({l.prompt, l.output_tokens});
  TrainOptions o;
  o.max_len = 256;  // stories260K's context
  o.buckets = LengthBuckets::equal(256, 8);
  o.epochs = 2;
  PredictorFile f;
  f.model = train_length_model(train, o);
  const std::string path = seer::testing::scratch_dir() + "/alpaca-small.seerlen";
  save_predictor_file(path, f);
  return path;
}

TEST(ServeS3, ConcurrentRequestsCompleteWithATrainedPredictor) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  SEER_REQUIRE_SHARED_FILE(vocab, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  const std::string predictor = train_small_alpaca_predictor(alpaca);
  ServerProcess s(model, {"--policy", "s3", "--predictor", predictor, "--kv-blocks", "48", "--block-size", "16",
                          "--swap-blocks", "64", "--threads", "2"});
  ASSERT_TRUE(s.up());
  bench::ServerMetricsProbe probe(bench::parse_server_url("http://127.0.0.1:" + std::to_string(s.port())));
  ASSERT_TRUE(probe.start());
  std::vector<std::future<HttpResult>> replies;
  for (int i = 0; i < 10; ++i) {
    json body = {{"prompt", "Write a story about a cat."}, {"max_tokens", 30 + 20 * (i % 5)},
                 {"ignore_eos", true}, {"temperature", 0}};
    replies.push_back(
        std::async(std::launch::async, [&s, b = body.dump()] { return http_post(s.port(), "/v1/completions", b); }));
  }
  for (size_t i = 0; i < replies.size(); ++i) {
    HttpResult r = replies[i].get();
    ASSERT_EQ(r.status, 200) << r.body;
    EXPECT_EQ(json::parse(r.body)["usage"]["completion_tokens"], 30 + 20 * (static_cast<int>(i) % 5)) << r.body;
  }
  // Every reply is complete: its freed KV is published before its end was sent (e2e/wait.h).
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
  EXPECT_EQ(wait_for_metric_eq(s.port(), "seer_length_prediction_error_tokens_count", 10), 10);
  EXPECT_TRUE(metric(s.port(), "seer_supervisor_preemptions_total").has_value());
  EXPECT_TRUE(metric(s.port(), "seer_predictor_retrainings_total").has_value());
  EXPECT_EQ(metric(s.port(), "seer_length_predictions_total").value_or(-1), 10);
  // What `seer bench --json` reports as `predictions`.
  bench::ServerSide side = probe.finish();
  ASSERT_TRUE(side.predictions.has_value());
  ASSERT_TRUE(side.predictions->accuracy.has_value());
  EXPECT_GE(*side.predictions->accuracy, 0.0);
  EXPECT_LE(*side.predictions->accuracy, 1.0);
  EXPECT_LE(side.predictions->under_predictions, 10);
}

// Every request runs to 200 tokens (bucket 6 of 8), which no Alpaca-trained predictor
// expects of this prompt: more than a retraining batch (32) of mispredictions reach
// the background retrainer, and the server reports the swapped-in model.
TEST(ServeS3, MispredictionsAreRetrainedInTheBackground) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  SEER_REQUIRE_SHARED_FILE(vocab, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  const std::string predictor = train_small_alpaca_predictor(alpaca);
  ServerProcess s(model, {"--policy", "s3", "--predictor", predictor, "--kv-blocks", "256", "--block-size", "16",
                          "--threads", "2"});
  ASSERT_TRUE(s.up());
  std::vector<std::future<HttpResult>> replies;
  for (int i = 0; i < 40; ++i) {
    json body = {{"prompt", "Name a colour."}, {"max_tokens", 200}, {"ignore_eos", true}, {"temperature", 0}};
    replies.push_back(
        std::async(std::launch::async, [&s, b = body.dump()] { return http_post(s.port(), "/v1/completions", b); }));
  }
  for (auto& f : replies) ASSERT_EQ(f.get().status, 200);
  // Retraining runs in the background: wait for it.
  EXPECT_GE(wait_for_metric(s.port(), "seer_predictor_retrainings_total", [](double v) { return v >= 1; }).value_or(0),
            1);
}

}  // namespace
}  // namespace seer::e2e
