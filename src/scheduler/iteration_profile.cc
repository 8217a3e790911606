#include "scheduler/iteration_profile.h"

#include <algorithm>

#include "common/error.h"

namespace seer {

IterationProfile::IterationProfile(std::vector<std::pair<int32_t, double>> points) {
  for (const auto& [tokens, seconds] : points) add(tokens, seconds);
}

void IterationProfile::add(int32_t tokens, double seconds) {
  if (tokens <= 0) fail("iteration profile: tokens must be > 0 (got {})", tokens);
  if (!(seconds >= 0)) fail("iteration profile: time for {} tokens must be >= 0 (got {})", tokens, seconds);
  auto it = std::lower_bound(points_.begin(), points_.end(), std::make_pair(tokens, 0.0),
                             [](const auto& a, const auto& b) { return a.first < b.first; });
  if (it != points_.end() && it->first == tokens) fail("iteration profile: two points for {} tokens", tokens);
  points_.insert(it, {tokens, seconds});
}

double IterationProfile::operator()(int32_t tokens) const {
  if (points_.empty()) fail("iteration profile is empty");
  if (points_.size() == 1) return points_[0].second * tokens / points_[0].first;
  size_t hi = 1;
  while (hi + 1 < points_.size() && points_[hi].first < tokens) ++hi;
  const auto& [x0, y0] = points_[hi - 1];
  const auto& [x1, y1] = points_[hi];
  return y0 + (y1 - y0) * (static_cast<double>(tokens) - x0) / (x1 - x0);
}

}  // namespace seer
