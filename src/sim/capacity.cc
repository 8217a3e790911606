#include "sim/capacity.h"

#include "common/error.h"

namespace seer {

bool meets_capacity_slo(const MetricsSummary& s, const CapacityCriteria& c) {
  if (s.requests == 0) return false;
  if (c.tbt_p99_s > 0 && s.tbt_s.p99 > c.tbt_p99_s) return false;
  if (c.min_slo_attainment > 0 && (!s.slo_attainment || *s.slo_attainment < c.min_slo_attainment)) return false;
  return s.scheduling_delay_p50_s <= c.sched_delay_p50_s;
}

CapacityResult find_capacity(const std::function<MetricsSummary(double)>& run, const CapacityCriteria& criteria,
                             double start_rate, double rel_tolerance, int max_probes,
                             const std::function<void(const CapacityProbe&)>& on_probe) {
  if (!(start_rate > 0)) fail("capacity search: the start rate must be positive, got {}", start_rate);
  if (!(rel_tolerance > 0)) fail("capacity search: the tolerance must be positive, got {}", rel_tolerance);
  CapacityResult result;
  auto probe = [&](double rate) {
    CapacityProbe p{rate, false, run(rate)};
    p.meets = meets_capacity_slo(p.summary, criteria);
    result.probes.push_back(p);
    if (on_probe) on_probe(p);
    return p.meets;
  };
  auto budget_left = [&] { return static_cast<int>(result.probes.size()) < max_probes; };

  double lo = 0, hi = 0;  // lo meets (0: none found yet), hi fails (0: none found yet)
  if (probe(start_rate)) {
    lo = start_rate;
    while (budget_left()) {
      if (!probe(lo * 2)) {
        hi = lo * 2;
        break;
      }
      lo *= 2;
    }
  } else {
    hi = start_rate;
    while (budget_left() && hi > 1e-6) {
      if (probe(hi / 2)) {
        lo = hi / 2;
        break;
      }
      hi /= 2;
    }
  }
  while (lo > 0 && hi > 0 && hi - lo > rel_tolerance * lo && budget_left()) {
    double mid = 0.5 * (lo + hi);
    (probe(mid) ? lo : hi) = mid;
  }
  result.capacity = lo;
  return result;
}

}  // namespace seer
