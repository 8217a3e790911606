#pragma once
// The cost model against the real engine's own iterations: reads the JSON lines of
// `seer serve --iteration-log` (engine/iteration_log.h) and compares each measured
// iteration time with the cost model's prediction for the same plan shape, per kind
// of iteration (`seer sim validate --iteration-log`; docs/simulator.md). The same
// samples refit the `cpu` entry (`seer sim calibrate --from-log`).
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/calibration_fit.h"
#include "sim/cost_model.h"

namespace seer {

// Throws seer::Error naming the file and line for anything malformed. Labels are the
// iteration's kind: "decode" (every chunk one token after a context), "prefill"
// (prompt chunks only) or "mixed".
std::vector<MeasuredIteration> read_iteration_log(const std::string& path);

struct IterationKindError {
  std::string kind;  // decode, prefill, mixed, all
  int64_t iterations = 0;
  double measured_mean_s = 0;
  double model_mean_s = 0;
  double mean_relative = 0;  // mean |model - measured| / measured
  double mean_signed = 0;    // mean (model - measured) / measured: - means the model is fast
  double total_relative = 0; // (sum model - sum measured) / sum measured
};

std::vector<IterationKindError> check_iterations(const CostModel& cost, const std::vector<MeasuredIteration>& samples);

std::string render_iteration_check(const std::vector<IterationKindError>& rows);
nlohmann::ordered_json iteration_check_json(const std::vector<IterationKindError>& rows);

}  // namespace seer
