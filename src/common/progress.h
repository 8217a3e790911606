#pragma once
// A one-line progress bar on stderr for long runs (model load, simulation, bench).
// Silent when stderr is not a terminal unless forced, so logs stay clean.
#include <chrono>
#include <cstdint>
#include <string>

namespace seer {

class ProgressBar {
 public:
  ProgressBar(std::string label, int64_t total, bool enabled = true);
  ~ProgressBar();
  void update(int64_t done, const std::string& suffix = "");
  void finish(const std::string& suffix = "");

 private:
  void draw(const std::string& suffix);
  std::string label_;
  int64_t total_;
  int64_t done_ = 0;
  bool enabled_;
  bool finished_ = false;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace seer
