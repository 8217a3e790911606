#pragma once
// The predictor settings `seer sim` and `seer serve` share (--predictor,
// --predictor-buckets, --predictor-max-len, --predictor-seed, --predictor-errors)
// and how they become a LengthPredictor.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "predict/length_predictor.h"

namespace seer {

struct PredictorFlags {
  std::string spec;      // "": no predictor; else oracle, noisy:ACC or a trained file
  int32_t buckets = 10;  // bucket count for oracle / noisy (a trained file has its own)
  int32_t max_len = 0;   // the buckets cover [0, max_len); 0: the context length
  uint64_t seed = 0;     // noisy: the error draw; retraining: the example order
  // A trained file retrains on mispredicted requests in the background
  // (RetrainingPredictor); on by default in `seer serve`, off in `seer sim`.
  bool retrain = false;
  // What a trained file's prediction reserves: "bucket", the predicted bucket's upper
  // end (S3), or "estimate", the model's finer token estimate (tighter; leans on the
  // supervisor). Oracle and noisy predictions are unaffected.
  std::string reserve = "bucket";
  // noisy: the bucket error distribution to draw wrong guesses from (`seer predict
  // eval --errors-out`); empty: the committed Alpaca one.
  std::string errors;

  bool enabled() const { return !spec.empty(); }
};

// Throws seer::Error naming --padding unless it is unset or in [0, 10].
void check_padding_flag(const std::optional<double>& padding);

// nullptr when no predictor is asked for. `max_model_len` is the context length the
// buckets default to. Throws seer::Error naming the bad flag.
std::unique_ptr<LengthPredictor> make_predictor_from_flags(const PredictorFlags& flags, int32_t max_model_len);
// The buckets oracle and noisy predictors built from `flags` use.
LengthBuckets predictor_buckets(const PredictorFlags& flags, int32_t max_model_len);

}  // namespace seer
