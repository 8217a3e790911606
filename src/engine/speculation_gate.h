#pragma once
// When speculation pays (docs/speculative.md, "Turning drafts off when they do not
// pay"). A verified draft costs the extra time of one more token in the step; an
// accepted one is an output token the batch got without a step of its own. With a
// decode step of B tokens taking t(B) = t0 + c·B, the batch makes B / t(B) tokens
// per second, so one more verified token (cost c) pays when it is accepted with
// probability above
//     break-even α* = c·B / t(B)
// (throughput with the drafts equal to without). The gate fits t0 and c online
// (median of pairwise slopes, robust to a loaded machine's stalls) to the engine's
// own last decode-only steps (measured on the server, modelled in the
// simulator: the same rule runs in both), keeps each request's acceptance over a
// window of verified drafts, and when a window's acceptance is not above α* the
// request stops drafting for a back-off of its own steps (doubling while probes
// keep failing, up to a cap), then probes again with a fresh window.
#include <cstdint>
#include <optional>
#include <vector>

#include "scheduler/request.h"

namespace seer {

struct SpeculationGateConfig {
  bool enabled = true;              // false: every request drafts whenever it can
  // A decision needs this many verified drafts over at least this many steps (one
  // step's drafts depend on each other: its first rejection ends them all).
  int32_t window_drafts = 8;
  int32_t window_steps = 4;
  int32_t backoff_steps = 32;       // first pause, in the request's own steps
  int32_t max_backoff_steps = 512;  // the pause doubles up to this
  int32_t fit_steps = 48;           // decode steps the cost fit looks at (the last ones)
};

// Decode-step time against its tokens over the last `window` steps, fitted by the
// Theil-Sen estimator: the slope c is the median of the slopes between every two
// steps of different token counts, the intercept t0 the median of time - c·tokens.
// Half the steps may be stalls of a loaded machine without moving it much (least
// squares is pulled by one). The estimate is updated only while the window has
// spread in its token counts; the last one stays when it stops having it (every
// request has stopped drafting).
class StepCostFit {
 public:
  explicit StepCostFit(int32_t window = 48) : window_(window) {}
  void observe(int32_t tokens, double seconds);
  struct Line {
    double t0 = 0;  // seconds per step
    double c = 0;   // seconds per token (>= 0)
    double at(double tokens) const { return t0 + c * tokens; }
  };
  const std::optional<Line>& line() const { return line_; }

 private:
  struct Point {
    int32_t tokens;
    double seconds;
  };
  int32_t window_;
  std::vector<Point> points_;  // a ring of the last window_ steps
  size_t next_ = 0;
  int64_t seen_ = 0;
  std::vector<double> scratch_;
  std::optional<Line> line_;
  void refit();
};

class SpeculationGate {
 public:
  explicit SpeculationGate(SpeculationGateConfig config = {}) : config_(config), fit_(config.fit_steps) {}

  // A step whose chunks are all decodes: `requests` of them, `tokens` with drafts.
  void observe_decode_step(int32_t requests, int32_t tokens, double seconds);
  // What proposing one draft token costs besides verifying it (a draft model's
  // forward passes; DraftProposer::seconds_per_draft), added to c in the break-even.
  void set_draft_cost(double seconds_per_draft) { draft_cost_s_ = seconds_per_draft; }
  // The acceptance a draft needs to pay at the last decode batch size,
  // (c + draft cost)·B / t(B), at most 1; 0 while there is no cost estimate yet
  // (drafting then runs, which gives the fit its data).
  double break_even() const;
  // After a chunk of the request with window w verified `drafted` drafts and accepted `accepted`: closes the
  // window when it is full, pausing the request when its acceptance is below break-even.
  void verified(Request::SpeculationWindow& w, int32_t drafted, int32_t accepted) const;
  // Before proposing the request's drafts for its next step: false while it is paused (each
  // call counts one of its paused steps).
  [[nodiscard]] bool may_draft(Request::SpeculationWindow& w) const;

  const SpeculationGateConfig& config() const { return config_; }
  const StepCostFit& fit() const { return fit_; }

 private:
  SpeculationGateConfig config_;
  StepCostFit fit_;
  int32_t last_batch_ = 1;
  double draft_cost_s_ = 0;
};

}  // namespace seer
