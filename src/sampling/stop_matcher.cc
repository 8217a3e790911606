#include "sampling/stop_matcher.h"

#include <algorithm>
#include <utility>

namespace seer {

StopMatcher::StopMatcher(std::vector<std::string> stops) : stops_(std::move(stops)) {
  std::erase_if(stops_, [](const std::string& s) { return s.empty(); });
  for (const auto& s : stops_) max_stop_len_ = std::max(max_stop_len_, s.size());
}

std::string StopMatcher::push(std::string_view text, bool* matched) {
  *matched = false;
  held_.append(text);
  if (stops_.empty()) return std::exchange(held_, {});
  // Earlier text held no complete stop string, so a match ends in the new text; the
  // earliest start wins.
  size_t first = std::string::npos;
  for (const auto& s : stops_) first = std::min(first, held_.find(s));
  if (first != std::string::npos) {
    *matched = true;
    std::string out = held_.substr(0, first);
    held_.clear();
    return out;
  }
  // Hold back the longest tail that is a prefix of some stop string.
  size_t keep = 0;
  const size_t max_tail = std::min(held_.size(), max_stop_len_ - 1);
  for (size_t len = max_tail; len > 0 && keep == 0; --len) {
    std::string_view tail(held_.data() + held_.size() - len, len);
    for (const auto& s : stops_)
      if (s.compare(0, len, tail) == 0) {
        keep = len;
        break;
      }
  }
  std::string out = held_.substr(0, held_.size() - keep);
  held_.erase(0, held_.size() - keep);
  return out;
}

std::string StopMatcher::flush() { return std::exchange(held_, {}); }

}  // namespace seer
