#include "kv/chunk_cost.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {

ChunkCostFn interpolated_chunk_cost(std::vector<std::pair<int32_t, double>> points) {
  if (points.empty()) fail("chunk cost: no profiled point");
  std::sort(points.begin(), points.end());
  for (size_t i = 0; i < points.size(); ++i) {
    if (!(points[i].second >= 0) || !std::isfinite(points[i].second))
      fail("chunk cost: cost {} at position {} is not a finite non-negative number", points[i].second,
           points[i].first);
    if (i > 0 && points[i].first == points[i - 1].first)
      fail("chunk cost: position {} profiled twice", points[i].first);
  }
  return [points = std::move(points)](int32_t l) {
    if (points.size() == 1 || l <= points.front().first) return points.front().second;
    auto hi = std::upper_bound(points.begin(), points.end(), l,
                               [](int32_t x, const std::pair<int32_t, double>& p) { return x < p.first; });
    if (hi == points.end()) --hi;  // extrapolate along the last segment
    auto lo = std::prev(hi);
    const double f = double(l - lo->first) / double(hi->first - lo->first);
    return std::max(0.0, lo->second + f * (hi->second - lo->second));
  };
}

}  // namespace seer
