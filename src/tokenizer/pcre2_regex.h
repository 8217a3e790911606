#pragma once
// A compiled PCRE2 pattern in UTF + Unicode-property mode (\p{L}, \p{N}, lookahead),
// JIT-compiled when the platform allows. Matching is thread-safe: each call uses its
// own match data.
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace seer {

class Pcre2Regex {
 public:
  // Throws seer::Error with PCRE2's message and the offset in the pattern.
  explicit Pcre2Regex(const std::string& pattern);
  ~Pcre2Regex();
  Pcre2Regex(const Pcre2Regex&) = delete;
  Pcre2Regex& operator=(const Pcre2Regex&) = delete;

  const std::string& pattern() const { return pattern_; }

  // The successive non-empty matches in `subject` as [begin, end) byte ranges, each
  // search starting where the previous match ended (an empty match steps over one
  // character). `$` matches only at the very end of the subject, as in ECMAScript.
  // Throws seer::Error when `subject` is not valid UTF-8.
  std::vector<std::pair<size_t, size_t>> matches(std::string_view subject) const;

 private:
  std::string pattern_;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace seer
