#pragma once
// Training the length model (length_model.h) by stochastic gradient descent with
// per-weight AdaGrad steps and L2 decay, over a seeded shuffle; and fine-tuning a
// trained model on new examples (online retraining, retraining_predictor.h).
#include <cstdint>
#include <string>
#include <vector>

#include "predict/length_model.h"

namespace seer {

struct LengthExample {
  std::string prompt;
  int32_t output_tokens = 0;
};

struct TrainOptions {
  ModelKind kind = ModelKind::FineLr;
  FeatureConfig features;
  LengthBuckets buckets = LengthBuckets::equal(2048, 10);
  int32_t max_len = 2048;
  int32_t fine_classes = 32;
  int32_t epochs = 4;
  float learning_rate = 0.5f;
  float l2 = 1e-6f;
  uint64_t seed = 0;
  // Classification kinds: tune first_bucket_margin on 10% of the training examples
  // (a model trained on the other 90%), then train on all of them.
  bool tune_margin = true;
  bool progress = false;  // a progress bar on stderr
};

// Throws seer::Error for an empty training set or bad options.
LengthModel train_length_model(const std::vector<LengthExample>& examples, const TrainOptions& options);

// A few plain SGD passes over `examples` at a small step, starting from `model`
// (online retraining on mispredicted requests).
void fine_tune(LengthModel& model, const std::vector<LengthExample>& examples, int32_t epochs,
               float learning_rate, uint64_t seed);

// The seeded 80/20 split shared by `seer predict train` and `eval`: indices of the
// test examples (every index not in it is a training example), sorted.
std::vector<size_t> test_split(size_t n, uint64_t seed, double test_fraction = 0.2);

}  // namespace seer
