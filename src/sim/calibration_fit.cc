#include "sim/calibration_fit.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {
namespace {

double log_loss(const ModelSpec& model, const HardwareSpec& hw, const CostModelOptions& opts,
                const std::vector<MeasuredIteration>& samples) {
  CostModel cost(model, hw, opts);
  double sum = 0;
  for (const auto& s : samples) {
    double r = std::log(cost.iteration_time(s.shape) / s.seconds);
    sum += r * r;
  }
  return sum / static_cast<double>(samples.size());
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

HardwareSpec fit_efficiency(const ModelSpec& model, const HardwareSpec& start, const CostModelOptions& opts,
                            const std::vector<MeasuredIteration>& samples) {
  if (samples.empty()) fail("calibration: no measured iterations to fit");
  for (const auto& s : samples)
    if (!(s.seconds > 0)) fail("calibration: measured time of '{}' must be positive", s.label);
  HardwareSpec hw = start;
  // The overhead starts at a small positive value so multiplicative steps can move it.
  if (hw.iteration_overhead_s <= 0) hw.iteration_overhead_s = 1e-5;
  double* params[] = {&hw.efficiency.memory, &hw.efficiency.compute, &hw.efficiency.attention_memory,
                      &hw.efficiency.attention_compute, &hw.iteration_overhead_s};
  const double upper[] = {1.0, 1.0, 1.0, 1.0, 10.0};
  // Coordinate descent with multiplicative steps: the loss is smooth and each
  // evaluation costs microseconds, so a few thousand of them are cheap.
  double best = log_loss(model, hw, opts, samples);
  for (double step = 2.0; step > 1.0005; step = std::sqrt(step)) {
    for (int round = 0; round < 60; ++round) {
      bool improved = false;
      for (int p = 0; p < 5; ++p) {
        for (double f : {step, 1.0 / step}) {
          double old = *params[p];
          *params[p] = std::clamp(old * f, 1e-6, upper[p]);
          double loss = log_loss(model, hw, opts, samples);
          if (loss < best - 1e-15) {
            best = loss;
            improved = true;
          } else {
            *params[p] = old;
          }
        }
      }
      if (!improved) break;
    }
  }
  return hw;
}

}  // namespace seer
