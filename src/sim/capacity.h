#pragma once
// Capacity (docs/architecture.md §3): the highest request rate whose run meets an SLO, P99 TBT
// <= X and median scheduling delay (first scheduled - arrival) <= 2 s, found by
// doubling (or halving) from a start rate to bracket it, then bisection.
#include <functional>
#include <vector>

#include "sim/metrics_summary.h"

namespace seer {

struct CapacityCriteria {
  double tbt_p99_s = 0;             // 0: no TBT bound
  double sched_delay_p50_s = 2.0;   // median scheduling delay bound
  // > 0: also at least this share of requests meets its own SLO (TTFT, TBT,
  // deadline; MetricsSummary::slo_attainment), SLO goodput rather than TBT alone.
  double min_slo_attainment = 0;
};

bool meets_capacity_slo(const MetricsSummary& s, const CapacityCriteria& c);

struct CapacityProbe {
  double rate = 0;
  bool meets = false;
  MetricsSummary summary;
};

struct CapacityResult {
  double capacity = 0;  // highest rate that met the SLO; 0 when none did
  std::vector<CapacityProbe> probes;
};

// `run(rate)` simulates at that rate. Stops when the bracket is within
// `rel_tolerance` of its low end or after `max_probes` runs.
CapacityResult find_capacity(const std::function<MetricsSummary(double)>& run, const CapacityCriteria& criteria,
                             double start_rate, double rel_tolerance = 0.05, int max_probes = 24,
                             const std::function<void(const CapacityProbe&)>& on_probe = {});

}  // namespace seer
