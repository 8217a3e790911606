#pragma once
// When speculation pays (docs/speculative.md, "Turning drafts off when they do not
// pay"). A verified draft costs the extra time of one more token in the step; an
// accepted one is an output token the batch got without a step of its own. With a
// decode step of B tokens taking t(B) = t0 + c·B, the batch makes B / t(B) tokens
// per second, so one more verified token (cost c) pays when it is accepted with
// probability above
//     break-even α* = c·B / t(B)
// (throughput with the drafts equal to without). The gate fits t0 and c online
// from the engine's own decode-only steps (measured on the server, modelled in the
// simulator: the same rule runs in both), keeps each request's acceptance over a
// window of verified drafts, and when a window's acceptance is not above α* the
// request stops drafting for a back-off of its own steps (doubling while probes
// keep failing, up to a cap), then probes again with a fresh window.
#include <cstdint>
#include <optional>

#include "scheduler/request.h"

namespace seer {

struct SpeculationGateConfig {
  bool enabled = true;              // false: every request drafts whenever it can
  int32_t window_drafts = 8;        // verified drafts per decision
  int32_t backoff_steps = 32;       // first pause, in the request's own steps
  int32_t max_backoff_steps = 512;  // the pause doubles up to this
  double forget = 0.98;             // the cost fit's weight decay per decode step
};

// Weighted least squares of decode-step time against its tokens, older steps
// weighing less (factor `forget` per step). The estimate is kept only while the
// steps seen have spread in their token counts (else the slope is noise); the last
// good one stays when they stop having it (every request has stopped drafting).
class StepCostFit {
 public:
  explicit StepCostFit(double forget = 0.98) : forget_(forget) {}
  void observe(int32_t tokens, double seconds);
  struct Line {
    double t0 = 0;  // seconds per step
    double c = 0;   // seconds per token (>= 0)
    double at(double tokens) const { return t0 + c * tokens; }
  };
  const std::optional<Line>& line() const { return line_; }

 private:
  double forget_;
  double w_ = 0, wx_ = 0, wy_ = 0, wxx_ = 0, wxy_ = 0;
  std::optional<Line> line_;
};

class SpeculationGate {
 public:
  explicit SpeculationGate(SpeculationGateConfig config = {}) : config_(config), fit_(config.forget) {}

  // A step whose chunks are all decodes: `requests` of them, `tokens` with drafts.
  void observe_decode_step(int32_t requests, int32_t tokens, double seconds);
  // The acceptance a draft needs to pay at the last decode batch size; 0 while
  // there is no cost estimate yet (drafting then runs, which gives the fit its data).
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
};

}  // namespace seer
