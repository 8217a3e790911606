#include "predict/length_model.h"

#include <gtest/gtest.h>

#include "predict/length_trainer.h"
#include "predict/predictor_eval.h"
#include "predict/trained_predictor.h"

namespace seer {
namespace {

// Two prompt families with very different answer lengths, plus filler words.
std::vector<LengthExample> separable_set(int n) {
  const char* fillers[] = {"today", "for me", "now", "quickly", "in english", "thanks"};
  std::vector<LengthExample> out;
  for (int i = 0; i < n; ++i) {
    std::string filler = fillers[i % 6];
    if (i % 2 == 0)
      out.push_back({"answer yes or no " + filler, 3 + i % 5});
    else
      out.push_back({"write a long detailed essay about history " + filler, 700 + i % 50});
  }
  return out;
}

TrainOptions small_options(ModelKind kind) {
  TrainOptions o;
  o.kind = kind;
  o.features.hash_bits = 12;
  o.max_len = 1000;
  o.buckets = LengthBuckets::equal(1000, 10);
  o.fine_classes = 16;
  o.epochs = kind == ModelKind::LogReg ? 40 : 5;  // the regression converges slower
  return o;
}

TEST(LengthModel, ClassEdgesFollowTheKind) {
  auto b = LengthBuckets::equal(2048, 10);
  EXPECT_EQ(class_edges_for(ModelKind::BucketLr, b, 2048, 32),
            (std::vector<int32_t>{0, 205, 410, 615, 820, 1025, 1230, 1435, 1640, 1845}));
  auto fine = class_edges_for(ModelKind::FineLr, b, 2048, 32);
  EXPECT_EQ(fine.front(), 0);
  EXPECT_EQ(fine[1], 8);
  EXPECT_EQ(fine.back(), 2048);
  EXPECT_TRUE(std::is_sorted(fine.begin(), fine.end()));
  EXPECT_TRUE(class_edges_for(ModelKind::LogReg, b, 2048, 32).empty());
}

TEST(LengthModel, EveryKindLearnsASeparableSet) {
  const auto train = separable_set(400), test = separable_set(60);
  for (ModelKind kind : {ModelKind::BucketLr, ModelKind::FineLr, ModelKind::LogReg}) {
    SCOPED_TRACE(model_kind_name(kind));
    LengthModel m = train_length_model(train, small_options(kind));
    m.check("model");
    EvalReport r = evaluate_length_model(m, train, test, "synthetic");
    EXPECT_EQ(r.accuracy, 1.0);
    EXPECT_GT(r.accuracy, r.baseline_majority_accuracy);
    EXPECT_LT(r.mae_tokens, r.baseline_mean_mae_tokens / 4);
    EXPECT_EQ(predict_length(m, "answer yes or no now").bucket, 0);
    EXPECT_EQ(predict_length(m, "write a long detailed essay about history thanks").bucket, 7);
  }
}

TEST(LengthModel, TrainingIsDeterministicForASeed) {
  const auto train = separable_set(100);
  LengthModel a = train_length_model(train, small_options(ModelKind::FineLr));
  LengthModel b = train_length_model(train, small_options(ModelKind::FineLr));
  ASSERT_EQ(a.weights.size(), b.weights.size());
  EXPECT_TRUE(a.weights == b.weights);
  EXPECT_EQ(a.first_bucket_margin, b.first_bucket_margin);
}

TEST(LengthModel, TestSplitIsSeededAndAFifth) {
  auto a = test_split(1000, 7), b = test_split(1000, 7), c = test_split(1000, 8);
  EXPECT_EQ(a.size(), 200u);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
}

TEST(LengthModel, EvaluationCountsBucketOffsets) {
  const auto train = separable_set(100);
  LengthModel m = train_length_model(train, small_options(ModelKind::BucketLr));
  // A test set whose "short" prompts really had long answers: every one is 7 buckets off.
  std::vector<LengthExample> test = {{"answer yes or no now", 750}, {"answer yes or no today", 760}};
  EvalReport r = evaluate_length_model(m, train, test, "synthetic");
  EXPECT_EQ(r.accuracy, 0.0);
  EXPECT_EQ(r.bucket_offsets.at(-7), 2);
  EXPECT_DOUBLE_EQ(r.mean_bucket_distance, 7.0);
  auto d = error_distribution(r, "test");
  EXPECT_DOUBLE_EQ(d.offsets.at(-7), 1.0);
  auto keys = r.to_json();
  EXPECT_EQ(keys.size(), 12u);
}

}  // namespace
}  // namespace seer
