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
//
// With `match_total_time` the fitted factors are then scaled together until the
// predictions sum to the measured total. Use it when the samples are a real workload's
// iterations: the mean relative error lets the many short decode steps outvote the few
// long mixed ones, a few per cent low in the sum, and queueing turns that into tens of
// per cent in the tail latencies of a busy server.
HardwareSpec fit_efficiency(const ModelSpec& model, const HardwareSpec& hw, const CostModelOptions& opts,
                            const std::vector<MeasuredIteration>& samples, bool match_total_time = false);

}  // namespace seer
