#include "engine/speculation_gate.h"

#include <algorithm>

namespace seer {

void StepCostFit::observe(int32_t tokens, double seconds) {
  if (!(seconds > 0)) return;
  const double x = tokens;
  w_ = forget_ * w_ + 1;
  wx_ = forget_ * wx_ + x;
  wy_ = forget_ * wy_ + seconds;
  wxx_ = forget_ * wxx_ + x * x;
  wxy_ = forget_ * wxy_ + x * seconds;
  const double mx = wx_ / w_, my = wy_ / w_;
  const double var = wxx_ / w_ - mx * mx;
  // A quarter of a token's standard deviation among at least ~8 steps' weight.
  if (w_ < 8 || var < 0.0625) return;
  const double c = std::max(0.0, (wxy_ / w_ - mx * my) / var);
  line_ = Line{std::max(0.0, my - c * mx), c};
}

void SpeculationGate::observe_decode_step(int32_t requests, int32_t tokens, double seconds) {
  if (requests <= 0) return;
  last_batch_ = requests;
  fit_.observe(tokens, seconds);
}

double SpeculationGate::break_even() const {
  const auto& line = fit_.line();
  if (!line || line->c <= 0) return 0;
  const double b = last_batch_;
  return std::min(1.0, line->c * b / line->at(b));
}

void SpeculationGate::verified(Request::SpeculationWindow& w, int32_t drafted, int32_t accepted) const {
  if (!config_.enabled || drafted <= 0) return;
  w.drafted += drafted;
  w.accepted += accepted;
  if (w.drafted < config_.window_drafts) return;
  const double acceptance = static_cast<double>(w.accepted) / w.drafted;
  w.drafted = w.accepted = 0;
  // A window without an accepted draft never pays, even where drafts cost nothing
  // measurable (a bandwidth-bound step, or no estimate yet).
  if (acceptance > break_even()) {
    w.backoff = 0;  // it pays: the next failure pauses briefly again
    return;
  }
  w.paused_steps = w.backoff > 0 ? w.backoff : config_.backoff_steps;
  w.backoff = std::min(config_.max_backoff_steps, 2 * w.paused_steps);
}

bool SpeculationGate::may_draft(Request::SpeculationWindow& w) const {
  if (!config_.enabled) return true;
  if (w.paused_steps <= 0) return true;
  --w.paused_steps;
  return false;
}

}  // namespace seer
