#pragma once
// Scores finished requests against their output-length predictions (S3, docs/s3.md)
// for the `predictions` object of `seer sim --json`.
#include <cstdint>
#include <optional>

#include "predict/length_predictor.h"
#include "sim/metrics_summary.h"

namespace seer {

class PredictionTally {
 public:
  // `buckets`: the predictor's, to score bucket accuracy (nullopt: unknown).
  explicit PredictionTally(std::optional<LengthBuckets> buckets) : buckets_(buckets) {}
  // A request that finished normally; ignored when it had no prediction.
  void add(const Request& r);
  // The figures so far; growths, supervisor preemptions and retrainings come from
  // the engine and the predictor.
  PredictionSummary summary(int64_t reservation_growths, int64_t supervisor_preemptions, int64_t retrainings) const;

 private:
  std::optional<LengthBuckets> buckets_;
  int64_t predicted_ = 0, scored_ = 0, correct_ = 0, under_ = 0;
  int64_t reserved_requests_ = 0, over_reserved_tokens_ = 0;
};

}  // namespace seer
