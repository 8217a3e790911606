#include "sim/prediction_tally.h"

#include <algorithm>

namespace seer {

void PredictionTally::add(const Request& r) {
  if (!r.predicted_output_len) return;
  ++predicted_;
  if (r.num_output() > *r.predicted_output_len) ++under_;
  if (buckets_ && r.predicted_bucket >= 0) {
    ++scored_;
    if (buckets_->bucket_of(r.num_output()) == r.predicted_bucket) ++correct_;
  }
  if (r.reserved_tokens > 0) {
    ++reserved_requests_;
    // The reservation was sized for the whole request; the last token's K/V is never
    // written (nothing follows it), so a request uses num_tokens() - 1 slots.
    over_reserved_tokens_ += std::max(0, r.reserved_tokens - (r.num_tokens() - 1));
  }
}

PredictionSummary PredictionTally::summary(int64_t reservation_growths, int64_t supervisor_preemptions,
                                           int64_t retrainings) const {
  PredictionSummary s;
  if (scored_ > 0) s.accuracy = static_cast<double>(correct_) / static_cast<double>(scored_);
  s.under_predictions = under_;
  if (reserved_requests_ > 0)
    s.over_reserved_tokens_mean = static_cast<double>(over_reserved_tokens_) / static_cast<double>(reserved_requests_);
  s.reservation_growths = reservation_growths;
  s.supervisor_preemptions = supervisor_preemptions;
  s.retrainings = retrainings;
  return s;
}

}  // namespace seer
