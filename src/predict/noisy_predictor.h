#pragma once
// `noisy:<accuracy>` (docs/predictor.md): for traces without prompt text. The true
// bucket (from Request::forced_output_len) with probability `accuracy`; otherwise the
// true bucket plus an offset drawn from the trained predictor's measured error
// distribution (predictor_eval.h), restricted to offsets that stay in range. The
// token estimate is the predicted bucket's upper bound. Seeded, deterministic.
#include <cstdint>

#include "predict/length_predictor.h"
#include "predict/predictor_eval.h"
#include "sampling/rng.h"

namespace seer {

class NoisyPredictor final : public LengthPredictor {
 public:
  // Throws seer::Error when accuracy is outside [0, 1] or the distribution is empty.
  NoisyPredictor(double accuracy, LengthBuckets buckets, BucketErrorDistribution errors, uint64_t seed);
  std::string name() const override;
  // Throws seer::Error for a request without a true length.
  LengthPrediction predict(const LengthQuery& q) override;

 private:
  int32_t wrong_bucket(int32_t truth);

  const double accuracy_;
  const LengthBuckets buckets_;
  const BucketErrorDistribution errors_;
  Rng rng_;
};

}  // namespace seer
