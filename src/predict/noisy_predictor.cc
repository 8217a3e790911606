#include "predict/noisy_predictor.h"

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

NoisyPredictor::NoisyPredictor(double accuracy, LengthBuckets buckets, BucketErrorDistribution errors, uint64_t seed)
    : accuracy_(accuracy), buckets_(buckets), errors_(std::move(errors)), rng_(seed) {
  if (!(accuracy >= 0 && accuracy <= 1)) fail("noisy predictor: accuracy must be in [0, 1], got {}", accuracy);
  if (errors_.offsets.empty()) fail("noisy predictor: the bucket error distribution is empty");
}

std::string NoisyPredictor::name() const { return fmt::format("noisy:{}", accuracy_); }

LengthPrediction NoisyPredictor::predict(const LengthQuery& q) {
  if (q.true_output_len < 0)
    fail("noisy predictor: request '{}' has no true output length (noisy needs a trace)", q.name);
  const int32_t truth = buckets_.bucket_of(q.true_output_len);
  const int32_t bucket = rng_.uniform() < accuracy_ ? truth : wrong_bucket(truth);
  return LengthPrediction{bucket, buckets_.upper_bound(bucket)};
}

// An offset drawn from the measured distribution among those that land in a bucket;
// with none (e.g. one bucket only) the truth.
int32_t NoisyPredictor::wrong_bucket(int32_t truth) {
  double mass = 0;
  for (const auto& [off, p] : errors_.offsets)
    if (truth + off >= 0 && truth + off < buckets_.count) mass += p;
  if (!(mass > 0)) {
    if (truth + 1 < buckets_.count) return truth + 1;  // the measured offsets all fall outside
    return truth > 0 ? truth - 1 : truth;
  }
  double u = rng_.uniform() * mass;
  int32_t last = truth;
  for (const auto& [off, p] : errors_.offsets) {
    if (truth + off < 0 || truth + off >= buckets_.count) continue;
    last = truth + off;
    if ((u -= p) < 0) return last;
  }
  return last;
}

}  // namespace seer
