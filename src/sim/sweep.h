#pragma once
// `seer sim sweep`: latency against request rate for several policies, as a JSON of
// the points and one SVG figure (E2E P50/P99, normalized latency P99, TBT P99).
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics_summary.h"

namespace seer {

struct SweepPoint {
  std::string policy;
  double rate = 0;
  MetricsSummary summary;
};

// Runs run(policy, rate) for every pair, policies outermost.
std::vector<SweepPoint> run_sweep(const std::vector<std::string>& policies, const std::vector<double>& rates,
                                  const std::function<MetricsSummary(const std::string&, double)>& run,
                                  const std::function<void(const SweepPoint&)>& on_point = {});

// {"title", "points": [{"policy", "rate", "summary": <seer sim --json object>}]}
nlohmann::ordered_json sweep_json(const std::string& title, const std::vector<SweepPoint>& points);
std::string sweep_svg(const std::string& title, const std::vector<SweepPoint>& points);

}  // namespace seer
