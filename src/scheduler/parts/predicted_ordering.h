#pragma once
// Shortest predicted output first within a deadline window: how `seer` uses a
// length predictor (docs/seer-policy.md, "Prediction never hurts").
#include "scheduler/parts/ordering.h"

namespace seer {

// Waiting requests are grouped by their first-token deadline (arrival + TTFT
// SLO, as DeadlineOrdering) into windows of `window_s` seconds; windows are
// served in deadline order, and inside a window the request with the fewest
// predicted output tokens still to come goes first (then by deadline). A short
// request can thus overtake a long one whose deadline is at most `window_s`
// earlier, and never one due sooner. Requests without a prediction rank as
// 0 tokens: with no predictor the order is exactly DeadlineOrdering's (windows
// are monotone in the deadline), so a predictor only reorders within windows.
class ShortestPredictedOrdering final : public Ordering {
 public:
  static constexpr double kDefaultWindowS = 1.0;
  explicit ShortestPredictedOrdering(double window_s = kDefaultWindowS);
  std::string_view name() const override { return "deadline-spf"; }
  QueueKey key(const Request& r) const override;
  double window_s() const { return window_s_; }

 private:
  double window_s_;
};

}  // namespace seer
