#include "sim/profile_fit.h"

#include <algorithm>
#include <array>
#include <cmath>

#include "common/error.h"

namespace seer {
namespace {

struct Factor {
  double* value;
  double lower, upper;
};

std::array<Factor, 4> factors(HardwareSpec& hw) {
  return {{{&hw.efficiency.memory, 1e-3, 1.0},
           {&hw.efficiency.compute, 1e-3, 1.0},
           {&hw.efficiency.elementwise, 1e-3, 1.0},
           {&hw.kernel_latency_s, 1e-7, 1e-3}}};
}

double loss(const HardwareSpec& hw, const std::vector<const BlockProfile*>& profiles) {
  return block_time_error(hw, profiles).mean_relative;
}

}  // namespace

ErrorStats block_time_error(const HardwareSpec& hw, const std::vector<const BlockProfile*>& profiles) {
  ErrorStats e;
  for (const BlockProfile* b : profiles) {
    CostModelOptions o;
    o.tp = b->tp;
    o.check_fits = false;  // one block is profiled, whatever the whole model needs
    const CostModel cost(*b->model, hw, o);
    for (const BlockPoint& p : b->points) {
      const LayerOpTimes t = cost.layer_op_times(p.tokens);
      double predicted = 0;
      for (size_t i = 0; i < kLayerOpCount; ++i)
        if (p.has_op[i]) predicted += t[i];
      const double rel = (predicted - p.measured_s) / p.measured_s;
      ++e.points;
      e.mean_relative += std::fabs(rel);
      e.mean_signed += rel;
      e.max_relative = std::max(e.max_relative, std::fabs(rel));
    }
  }
  if (e.points > 0) {
    e.mean_relative /= static_cast<double>(e.points);
    e.mean_signed /= static_cast<double>(e.points);
  }
  return e;
}

HardwareSpec with_start_factors(HardwareSpec hw) {
  hw.efficiency.memory = 1.0;
  hw.efficiency.compute = 0.5;
  hw.efficiency.elementwise = 0.5;
  hw.kernel_latency_s = 5e-6;
  return hw;
}

HardwareSpec fit_block_factors(const HardwareSpec& start, const std::vector<const BlockProfile*>& profiles) {
  if (!start.linear_regimes.empty()) fail("fit of {}: hardware with linear_regimes is not fitted to block profiles", start.name);
  size_t points = 0;
  for (const BlockProfile* b : profiles) points += b->points.size();
  if (points == 0) fail("fit of {}: no profile points to fit", start.name);
  HardwareSpec hw = start;
  const std::array<Factor, 4> params = factors(hw);
  for (const Factor& f : params) *f.value = std::clamp(*f.value, f.lower, f.upper);
  double best = loss(hw, profiles);
  for (double step = 2.0; step > 1.0005; step = std::sqrt(step)) {
    for (int round = 0; round < 200; ++round) {
      bool improved = false;
      for (const Factor& f : params)
        for (double k : {step, 1.0 / step}) {
          const double old = *f.value;
          *f.value = std::clamp(old * k, f.lower, f.upper);
          if (const double l = loss(hw, profiles); l < best - 1e-15) {
            best = l;
            improved = true;
          } else {
            *f.value = old;
          }
        }
      if (!improved) break;
    }
  }
  return hw;
}

}  // namespace seer
