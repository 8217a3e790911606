#pragma once
// Scores finished requests against their output-length predictions (S3, docs/s3.md)
// for the `predictions` object of `seer sim --json`, the server's metrics and `seer bench`.
#include <cstdint>
#include <optional>

#include "predict/length_predictor.h"
#include "scheduler/request.h"

namespace seer {

// Output-length prediction and S3's supervisor (docs/s3.md); present when a length
// predictor ran.
struct PredictionSummary {
  // Finished requests whose true length fell in the predicted bucket; nullopt when
  // the buckets are unknown.
  std::optional<double> accuracy;
  int64_t under_predictions = 0;         // finished requests longer than predicted
  double over_reserved_tokens_mean = 0;  // reserved minus used KV tokens at finish, mean
  int64_t reservation_growths = 0;
  int64_t supervisor_preemptions = 0;
  int64_t retrainings = 0;
};

// The tally's running counts; the server exports them as counters and `seer bench`
// turns their deltas back into a PredictionSummary.
struct PredictionCounts {
  int64_t predicted = 0;  // finished requests that had a prediction
  int64_t scored = 0;     // ... whose bucket could be scored
  int64_t correct = 0;    // ... whose true length fell in the predicted bucket
  int64_t under = 0;      // ... longer than predicted
  int64_t reserved_requests = 0, over_reserved_tokens = 0;
};

class PredictionTally {
 public:
  // `buckets`: the predictor's, to score bucket accuracy (nullopt: unknown).
  explicit PredictionTally(std::optional<LengthBuckets> buckets) : buckets_(buckets) {}
  // A request that finished normally; ignored when it had no prediction.
  void add(const Request& r);
  // The figures so far; growths, supervisor preemptions and retrainings come from
  // the engine and the predictor.
  PredictionSummary summary(int64_t reservation_growths, int64_t supervisor_preemptions, int64_t retrainings) const {
    return summarize(counts_, reservation_growths, supervisor_preemptions, retrainings);
  }
  const PredictionCounts& counts() const { return counts_; }
  static PredictionSummary summarize(const PredictionCounts& c, int64_t reservation_growths,
                                     int64_t supervisor_preemptions, int64_t retrainings);

 private:
  std::optional<LengthBuckets> buckets_;
  PredictionCounts counts_;
};

}  // namespace seer
