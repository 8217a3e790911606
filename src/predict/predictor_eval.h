#pragma once
// Scoring a length model on held-out examples against the two baselines the issue
// names: always the most frequent training bucket, and always the training mean.
// The _width_32 figures score the model's token estimate against 32-token buckets
// (S3's max_len/10 buckets are generous on short answers).
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "predict/length_model.h"
#include "predict/length_trainer.h"

namespace seer {

struct EvalReport {
  std::string dataset;
  int64_t test_requests = 0;
  int32_t buckets = 0;
  int32_t bucket_width = 0;
  double accuracy = 0;              // predicted bucket == true bucket
  double mean_bucket_distance = 0;  // mean |predicted - true| bucket over all test requests
  double mae_tokens = 0;            // mean |token estimate - true length|
  double baseline_majority_accuracy = 0;
  double baseline_mean_mae_tokens = 0;
  double accuracy_width_32 = 0;
  double baseline_majority_accuracy_width_32 = 0;
  double predict_time_ms_mean = 0;  // features + model, per prompt
  // Extra figures for the table (not in the JSON): mean distance of the wrong guesses,
  // and counts of (predicted - true bucket) offsets.
  double mean_wrong_distance = 0;
  std::map<int32_t, int64_t> bucket_offsets;

  nlohmann::ordered_json to_json() const;  // exactly the keys
};

EvalReport evaluate_length_model(const LengthModel& model, const std::vector<LengthExample>& train,
                                 const std::vector<LengthExample>& test, const std::string& dataset);

// The distribution of bucket offsets (predicted - true) among wrong guesses, which
// `noisy:<accuracy>` draws from (noisy_predictor.h). Stored as JSON:
//   {"source": "...", "offsets": {"-1": 0.3, "1": 0.6, "2": 0.1}}
struct BucketErrorDistribution {
  std::string source;
  std::map<int32_t, double> offsets;  // offset != 0 -> probability, summing to 1
};
BucketErrorDistribution error_distribution(const EvalReport& report, const std::string& source);
void save_error_distribution(const std::string& path, const BucketErrorDistribution& d);
// Throws seer::Error naming the file when it is missing or malformed.
BucketErrorDistribution load_error_distribution(const std::string& path);
// The committed distribution measured on Alpaca (data/predict/bucket_errors.json).
std::string default_error_distribution_path();

}  // namespace seer
