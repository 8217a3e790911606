#pragma once
// `seer sim calibrate`: measures the real CPU backend on a model file for several
// batch shapes (prompt chunks, decode batches at several contexts), measures this
// machine's streaming bandwidth and GEMM peak, fits the `cpu` hardware entry's
// efficiency factors and reports the cost model's error on the measured iterations.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/calibration_fit.h"

namespace seer {

struct HostPeaks {
  int64_t memory_bytes = 0;
  double memory_bandwidth = 0;  // bytes/s, multi-threaded streaming read
  double peak_flops = 0;        // FP32 SGEMM (OpenBLAS), all threads
};
// `quick` uses a smaller buffer and GEMM (tests).
HostPeaks measure_host_peaks(int threads, bool quick = false);

struct CalibrateOptions {
  std::string model_path;
  int threads = 0;   // 0: all cores
  int repeats = 3;   // timed runs per shape (median)
  bool quick = false;  // fewer, smaller shapes (tests)
};

struct CalibrationResult {
  ModelSpec model;
  CostModelOptions cost;  // bytes per weight / K/V element of the file
  HardwareSpec cpu;       // fitted
  std::vector<MeasuredIteration> samples;
  FitError error_before;  // with the starting factors
  FitError error_after;
};

CalibrationResult calibrate_cpu(const CalibrateOptions& opts);

}  // namespace seer
