#include "scheduler/parts/predicted_ordering.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {

ShortestPredictedOrdering::ShortestPredictedOrdering(double window_s) : window_s_(window_s) {
  if (!(window_s > 0) || !std::isfinite(window_s))
    fail("scheduler: deadline window must be a positive number of seconds (got {})", window_s);
}

QueueKey ShortestPredictedOrdering::key(const Request& r) const {
  const double deadline = r.arrival_s + r.slo.ttft_s;
  const int32_t to_come =
      r.predicted_output_len ? std::max(0, *r.predicted_output_len - static_cast<int32_t>(r.num_output())) : 0;
  return QueueKey{{std::floor(deadline / window_s_), static_cast<double>(to_come), deadline}, r.id};
}

}  // namespace seer
