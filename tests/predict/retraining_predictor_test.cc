#include "predict/retraining_predictor.h"

#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "predict/trained_predictor.h"

namespace seer {
namespace {

std::shared_ptr<const LengthModel> short_answer_model() {
  TrainOptions o;
  o.kind = ModelKind::BucketLr;
  o.features.hash_bits = 10;
  o.max_len = 1000;
  o.buckets = LengthBuckets::equal(1000, 10);
  o.epochs = 3;
  std::vector<LengthExample> ex;
  for (int i = 0; i < 50; ++i) ex.push_back({"answer briefly number " + std::to_string(i), 5});
  return std::make_shared<const LengthModel>(train_length_model(ex, o));
}

// A request that finished with `len` output tokens, as the engine shows it to a
// predictor: first the query, then the outcome.
struct Finished {
  int64_t id;
  std::string prompt;
  int32_t len;
  LengthQuery query() const {
    LengthQuery q;
    q.id = id;
    q.prompt_text = prompt;
    return q;
  }
  LengthOutcome outcome() const { return {.id = id, .prompt_text = prompt, .output_len = len}; }
};

TEST(RetrainingPredictor, RetrainsInTheBackgroundAndSwapsWhileAnotherThreadPredicts) {
  RetrainOptions opts;
  opts.batch = 8;
  opts.epochs = 4;
  opts.learning_rate = 0.5f;
  RetrainingPredictor p(short_answer_model(), "test", opts);
  const std::string long_prompt = "write an essay on the history of rome";
  auto first = p.current_model();
  const int32_t first_bucket = predict_length(*first, long_prompt).bucket;

  // A reader thread (another engine, a metrics scrape) predicts all along; it must see
  // whole models only, the old one and then a retrained one, never a torn one.
  std::atomic<bool> done{false}, reader_saw_retrained{false};
  std::atomic<int64_t> reader_predictions{0};
  std::thread reader([&] {
    LengthQuery r;
    r.prompt_text = long_prompt;
    while (!done.load()) {
      LengthPrediction pr = p.predict(r);  // id -1: not tracked for observe()
      EXPECT_GE(pr.bucket, 0);
      EXPECT_LT(pr.bucket, 10);
      if (pr.bucket > first_bucket) reader_saw_retrained = true;
      ++reader_predictions;
    }
  });
  // The engine thread: predict, then observe the true (long) outcome.
  for (int64_t id = 0; id < 64; ++id) {
    const Finished r{id, long_prompt, 750};
    (void)p.predict(r.query());
    p.observe(r.outcome());
  }
  const bool retrained = p.wait_for_retrainings(1, std::chrono::seconds(60));
  // The reader picks the swapped-in model up without any handshake.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (retrained && !reader_saw_retrained.load() && std::chrono::steady_clock::now() < deadline)
    std::this_thread::yield();
  done = true;
  reader.join();
  ASSERT_TRUE(retrained);
  EXPECT_TRUE(reader_saw_retrained.load());

  PredictorStats s = p.stats();
  EXPECT_GE(s.retrainings, 1);
  EXPECT_EQ(s.observed, 64);
  EXPECT_EQ(s.predictions, 64 + reader_predictions.load());
  EXPECT_LT(s.correct, s.observed);
  EXPECT_GE(s.recent_accuracy, 0.0);
  EXPECT_NE(p.current_model(), first);
  // The retrained model moved toward the long answers it was shown.
  EXPECT_GT(predict_length(*p.current_model(), long_prompt).bucket, predict_length(*first, long_prompt).bucket);
}

TEST(RetrainingPredictor, CountsCorrectPredictionsAndIgnoresUnknownRequests) {
  RetrainingPredictor p(short_answer_model(), "test");
  const Finished r{1, "answer briefly number 3", 5};
  EXPECT_EQ(p.predict(r.query()).bucket, 0);
  p.observe(r.outcome());
  p.observe(Finished{99, "never predicted", 5}.outcome());
  PredictorStats s = p.stats();
  EXPECT_EQ(s.predictions, 1);
  EXPECT_EQ(s.observed, 1);
  EXPECT_EQ(s.correct, 1);
  EXPECT_EQ(s.retrainings, 0);
  EXPECT_DOUBLE_EQ(s.recent_accuracy, 1.0);
  EXPECT_FALSE(p.wait_for_retrainings(1, std::chrono::milliseconds(1)));
}

}  // namespace
}  // namespace seer
