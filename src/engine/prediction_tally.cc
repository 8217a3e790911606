#include "engine/prediction_tally.h"

#include <algorithm>

namespace seer {

void PredictionTally::add(const Request& r) {
  if (!r.predicted_output_len) return;
  PredictionCounts& c = counts_;
  ++c.predicted;
  if (r.num_output() > *r.predicted_output_len) ++c.under;
  if (buckets_ && r.predicted_bucket >= 0) {
    ++c.scored;
    if (buckets_->bucket_of(r.num_output()) == r.predicted_bucket) ++c.correct;
  }
  if (r.reserved_tokens > 0) {
    ++c.reserved_requests;
    // The reservation was sized for the whole request; the last token's K/V is never
    // written (nothing follows it), so a request uses num_tokens() - 1 slots.
    c.over_reserved_tokens += std::max(0, r.reserved_tokens - (r.num_tokens() - 1));
  }
}

PredictionSummary PredictionTally::summarize(const PredictionCounts& c, int64_t reservation_growths,
                                             int64_t supervisor_preemptions, int64_t retrainings) {
  PredictionSummary s;
  if (c.scored > 0) s.accuracy = static_cast<double>(c.correct) / static_cast<double>(c.scored);
  s.under_predictions = c.under;
  if (c.reserved_requests > 0)
    s.over_reserved_tokens_mean = static_cast<double>(c.over_reserved_tokens) / static_cast<double>(c.reserved_requests);
  s.reservation_growths = reservation_growths;
  s.supervisor_preemptions = supervisor_preemptions;
  s.retrainings = retrainings;
  return s;
}

}  // namespace seer
