#include "engine/speculation_gate.h"

#include <algorithm>

namespace seer {

namespace {

double median(std::vector<double>& v) {
  const auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

void StepCostFit::observe(int32_t tokens, double seconds) {
  if (!(seconds > 0) || tokens <= 0 || window_ <= 1) return;
  if (points_.size() < static_cast<size_t>(window_)) {
    points_.push_back({tokens, seconds});
  } else {
    points_[next_] = {tokens, seconds};
    next_ = (next_ + 1) % points_.size();
  }
  // Refitting costs window² / 2 slopes: every 4th step is often enough.
  if (++seen_ % 4 == 0) refit();
}

void StepCostFit::refit() {
  if (points_.size() < 8) return;
  scratch_.clear();
  for (size_t i = 0; i < points_.size(); ++i)
    for (size_t j = i + 1; j < points_.size(); ++j)
      if (points_[i].tokens != points_[j].tokens)
        scratch_.push_back((points_[j].seconds - points_[i].seconds) / (points_[j].tokens - points_[i].tokens));
  // Spread: at least as many pairs of different token counts as steps (one step in
  // eight differing from the rest gives about that many).
  if (scratch_.size() < points_.size()) return;
  const double c = std::max(0.0, median(scratch_));
  scratch_.clear();
  for (const Point& p : points_) scratch_.push_back(p.seconds - c * p.tokens);
  line_ = Line{std::max(0.0, median(scratch_)), c};
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
  return std::min(1.0, (line->c + draft_cost_s_) * b / line->at(b));
}

void SpeculationGate::verified(Request::SpeculationWindow& w, int32_t drafted, int32_t accepted) const {
  if (!config_.enabled || drafted <= 0) return;
  w.drafted += drafted;
  w.accepted += accepted;
  ++w.verifications;
  if (w.drafted < config_.window_drafts || w.verifications < config_.window_steps) return;
  const double acceptance = static_cast<double>(w.accepted) / w.drafted;
  w.drafted = w.accepted = w.verifications = 0;
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
