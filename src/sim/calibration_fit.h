#pragma once
// Fits a hardware entry's efficiency factors and per-iteration overhead to measured
// iteration times (`seer sim calibrate`), and reports the cost model's error.
#include <vector>

#include "sim/catalog.h"
#include "sim/cost_model.h"

namespace seer {

struct MeasuredIteration {
  IterationShape shape;
  double seconds = 0;
  std::string label;  // e.g. "decode b=8 ctx=512"
};

struct FitError {
  double mean_relative = 0;  // mean |predicted - measured| / measured
  double max_relative = 0;
};

FitError model_error(const CostModel& cost, const std::vector<MeasuredIteration>& samples);

// Starting from `hw`, adjusts efficiency.{memory, compute, attention_memory,
// attention_compute} and those of each linear regime (each in (0, 1]), each
// regime's overlap (one of 1, 1.5, 2, 3, 4, 8) and iteration_overhead_s (>= 0) to
// minimize the mean relative error of the predictions. Other fields, the regimes'
// row thresholds included, are kept.
HardwareSpec fit_efficiency(const ModelSpec& model, const HardwareSpec& hw, const CostModelOptions& opts,
                            const std::vector<MeasuredIteration>& samples);

}  // namespace seer
