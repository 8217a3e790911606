#include "sim/calibration_fit.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "common/error.h"

namespace seer {
namespace {

// The figure reported to the user: fitting it directly means the fit can never
// make the report worse.
double loss(const ModelSpec& model, const HardwareSpec& hw, const CostModelOptions& opts,
            const std::vector<MeasuredIteration>& samples) {
  return model_error(CostModel(model, hw, opts), samples).mean_relative;
}

}  // namespace

FitError model_error(const CostModel& cost, const std::vector<MeasuredIteration>& samples) {
  FitError e;
  for (const auto& s : samples) {
    double rel = std::fabs(cost.iteration_time(s.shape) - s.seconds) / s.seconds;
    e.mean_relative += rel;
    e.max_relative = std::max(e.max_relative, rel);
  }
  if (!samples.empty()) e.mean_relative /= static_cast<double>(samples.size());
  return e;
}

namespace {

// Sum of predicted over sum of measured times, minus one.
double total_time_error(const CostModel& cost, const std::vector<MeasuredIteration>& samples) {
  double predicted = 0, measured = 0;
  for (const auto& s : samples) {
    predicted += cost.iteration_time(s.shape);
    measured += s.seconds;
  }
  return measured > 0 ? predicted / measured - 1 : 0;
}

// A parameter the fit moves: an efficiency factor (time ~ 1/value, at most 1, or
// kMaxLinearCompute for the linear layers' compute) or a time (time ~ value).
struct FitParameter {
  double* value;
  double upper;
  bool is_time;
};

std::vector<FitParameter> fitted_parameters(HardwareSpec& hw) {
  std::vector<FitParameter> params = {{&hw.efficiency.attention_memory, 1.0, false},
                                      {&hw.efficiency.attention_compute, 1.0, false},
                                      {&hw.iteration_overhead_s, 10.0, true}};
  // The GEMMs' own factors, unless a regime from one row on replaces them.
  if (hw.linear_regimes.empty() || hw.linear_regimes.front().min_tokens > 1) {
    params.push_back({&hw.efficiency.memory, 1.0, false});
    params.push_back({&hw.efficiency.compute, kMaxLinearCompute, false});
  }
  for (auto& r : hw.linear_regimes) {
    params.push_back({&r.memory, 1.0, false});
    params.push_back({&r.compute, kMaxLinearCompute, false});
  }
  return params;
}

// Coordinate descent with multiplicative steps on the continuous factors; the
// regimes' overlaps stay as given.
HardwareSpec fit_factors(const ModelSpec& model, HardwareSpec hw, const CostModelOptions& opts,
                         const std::vector<MeasuredIteration>& samples) {
  // The overhead starts at a small positive value so multiplicative steps can move it.
  if (hw.iteration_overhead_s <= 0) hw.iteration_overhead_s = 1e-5;
  const std::vector<FitParameter> params = fitted_parameters(hw);
  // Each evaluation costs microseconds per sample, so a few thousand are cheap.
  double best = loss(model, hw, opts, samples);
  for (double step = 2.0; step > 1.0005; step = std::sqrt(step)) {
    for (int round = 0; round < 60; ++round) {
      bool improved = false;
      for (size_t p = 0; p < params.size(); ++p) {
        for (double f : {step, 1.0 / step}) {
          double old = *params[p].value;
          *params[p].value = std::clamp(old * f, 1e-6, params[p].upper);
          double l = loss(model, hw, opts, samples);
          if (l < best - 1e-15) {
            best = l;
            improved = true;
          } else {
            *params[p].value = old;
          }
        }
      }
      if (!improved) break;
    }
  }
  return hw;
}

// Every fitted time multiplied by k (factors divided by it, within their bounds).
HardwareSpec scaled(HardwareSpec hw, double k) {
  for (const FitParameter& p : fitted_parameters(hw))
    *p.value = p.is_time ? *p.value * k : std::clamp(*p.value / k, 1e-6, p.upper);
  return hw;
}

// The scale that makes the predictions sum to the measured total: the summed time
// grows with k, so bisection finds it (or the nearest bound a factor at 1 allows).
HardwareSpec match_total(const ModelSpec& model, const HardwareSpec& hw, const CostModelOptions& opts,
                         const std::vector<MeasuredIteration>& samples) {
  auto error_at = [&](double k) { return total_time_error(CostModel(model, scaled(hw, k), opts), samples); };
  double lo = 0.5, hi = 2.0;
  for (int i = 0; i < 60; ++i) {
    const double mid = std::sqrt(lo * hi);
    (error_at(mid) < 0 ? lo : hi) = mid;
  }
  return scaled(hw, std::sqrt(lo * hi));
}

}  // namespace

HardwareSpec fit_efficiency(const ModelSpec& model, const HardwareSpec& start, const CostModelOptions& opts,
                            const std::vector<MeasuredIteration>& samples, bool match_total_time) {
  if (samples.empty()) fail("calibration: no measured iterations to fit");
  for (const auto& s : samples)
    if (!(s.seconds > 0)) fail("calibration: measured time of '{}' must be positive", s.label);
  // An overlap trades off against the memory factor, which local steps cannot
  // untangle: each regime's overlap is chosen from a grid, one regime at a time,
  // refitting the factors for every candidate.
  HardwareSpec best = fit_factors(model, start, opts, samples);
  double best_loss = loss(model, best, opts, samples);
  for (size_t r = 0; r < best.linear_regimes.size(); ++r) {
    const HardwareSpec base = best;
    for (double p : {1.0, 1.5, 2.0, 3.0, 4.0, 8.0}) {
      if (p == base.linear_regimes[r].overlap) continue;
      HardwareSpec hw = base;
      hw.linear_regimes[r].overlap = p;
      hw = fit_factors(model, hw, opts, samples);
      if (double l = loss(model, hw, opts, samples); l < best_loss) {
        best = hw;
        best_loss = l;
      }
    }
  }
  return match_total_time ? match_total(model, best, opts, samples) : best;
}

}  // namespace seer
