#include "sim/calibration_fit.h"

#include <algorithm>
#include <cmath>

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
  // Coordinate descent with multiplicative steps: each
  // evaluation costs microseconds, so a few thousand of them are cheap.
  double best = loss(model, hw, opts, samples);
  for (double step = 2.0; step > 1.0005; step = std::sqrt(step)) {
    for (int round = 0; round < 60; ++round) {
      bool improved = false;
      for (int p = 0; p < 5; ++p) {
        for (double f : {step, 1.0 / step}) {
          double old = *params[p];
          *params[p] = std::clamp(old * f, 1e-6, upper[p]);
          double l = loss(model, hw, opts, samples);
          if (l < best - 1e-15) {
            best = l;
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
