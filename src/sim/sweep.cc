#include "sim/sweep.h"

#include <algorithm>
#include <functional>

#include "sim/svg_plot.h"

namespace seer {

std::vector<SweepPoint> run_sweep(const std::vector<std::string>& policies, const std::vector<double>& rates,
                                  const std::function<MetricsSummary(const std::string&, double)>& run,
                                  const std::function<void(const SweepPoint&)>& on_point) {
  std::vector<SweepPoint> out;
  for (const auto& policy : policies)
    for (double rate : rates) {
      out.push_back({policy, rate, run(policy, rate)});
      if (on_point) on_point(out.back());
    }
  return out;
}

nlohmann::ordered_json sweep_json(const std::string& title, const std::vector<SweepPoint>& points) {
  nlohmann::ordered_json j;
  j["title"] = title;
  j["points"] = nlohmann::ordered_json::array();
  for (const auto& p : points)
    j["points"].push_back({{"policy", p.policy}, {"rate", p.rate}, {"summary", summary_json(p.summary)}});
  return j;
}

std::string sweep_svg(const std::string& title, const std::vector<SweepPoint>& points) {
  struct Metric {
    const char* title;
    const char* y_label;
    bool log_y;
    std::function<double(const MetricsSummary&)> value;
  };
  const Metric metrics[] = {
      {"E2E latency P50", "seconds", true, [](const MetricsSummary& s) { return s.e2e_s.p50; }},
      {"E2E latency P99", "seconds", true, [](const MetricsSummary& s) { return s.e2e_s.p99; }},
      {"Normalized latency P99", "s / output token", true,
       [](const MetricsSummary& s) { return s.normalized_latency_s.p99; }},
      {"TBT P99", "seconds", false, [](const MetricsSummary& s) { return s.tbt_s.p99; }},
  };
  std::vector<std::string> policies;
  for (const auto& p : points)
    if (std::find(policies.begin(), policies.end(), p.policy) == policies.end()) policies.push_back(p.policy);
  std::vector<PlotPanel> panels;
  for (const auto& m : metrics) {
    PlotPanel panel{m.title, "request rate (req/s)", m.y_label, m.log_y, {}};
    for (const auto& policy : policies) {
      PlotSeries s{policy, {}};
      for (const auto& p : points)
        if (p.policy == policy) s.points.emplace_back(p.rate, m.value(p.summary));
      panel.series.push_back(std::move(s));
    }
    panels.push_back(std::move(panel));
  }
  return render_svg(title, panels);
}

}  // namespace seer
