#pragma once
// A measured or modelled profile of iteration time against tokens per iteration,
// used to pick Sarathi's token budget from a TBT SLO (docs/architecture.md §1.3).
#include <cstdint>
#include <utility>
#include <vector>

namespace seer {

class IterationProfile {
 public:
  IterationProfile() = default;
  // Points (tokens, seconds) in any order; tokens must be > 0 and distinct.
  explicit IterationProfile(std::vector<std::pair<int32_t, double>> points);
  void add(int32_t tokens, double seconds);
  bool empty() const { return points_.empty(); }
  // Linear interpolation between points; linear extrapolation from the two
  // nearest points outside them (a single point scales proportionally).
  double operator()(int32_t tokens) const;
  const std::vector<std::pair<int32_t, double>>& points() const { return points_; }

 private:
  std::vector<std::pair<int32_t, double>> points_;  // sorted by tokens
};

// Largest multiple of `tile` (<= max_tokens) whose iteration time is <= slo_s,
// assuming time grows with tokens; `tile` itself when even that misses the SLO.
template <typename TimeFn>
int32_t token_budget_for_slo(const TimeFn& iteration_time, double slo_s, int32_t tile, int32_t max_tokens) {
  int32_t lo = 1, hi = max_tokens / tile;  // in tiles
  if (hi < 1) return tile;
  int32_t best = 1;
  while (lo <= hi) {
    int32_t mid = lo + (hi - lo) / 2;
    if (iteration_time(mid * tile) <= slo_s) {
      best = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return best * tile;
}

}  // namespace seer
