#pragma once
// Stop strings across token boundaries: text is held back while it could still be
// the beginning of a stop string, and never emitted past one.
#include <string>
#include <string_view>
#include <vector>

namespace seer {

class StopMatcher {
 public:
  explicit StopMatcher(std::vector<std::string> stops);
  // Feeds newly decoded text. Returns the text that is safe to emit now. When a stop
  // string completes, *matched becomes true and only the text before it is returned.
  std::string push(std::string_view text, bool* matched);
  // The held-back text when generation ends without a match.
  std::string flush();

 private:
  std::vector<std::string> stops_;
  std::string held_;
  size_t max_stop_len_ = 0;
};

}  // namespace seer
