#include "common/progress.h"

#include <unistd.h>

#include <cstdio>

#include <fmt/format.h>

namespace seer {

ProgressBar::ProgressBar(std::string label, int64_t total, bool enabled)
    : label_(std::move(label)),
      total_(total),
      enabled_(enabled && ::isatty(STDERR_FILENO)),
      start_(std::chrono::steady_clock::now()),
      last_draw_(start_) {}

ProgressBar::~ProgressBar() {
  if (!finished_) finish();
}

void ProgressBar::update(int64_t done, const std::string& suffix) {
  done_ = done;
  auto now = std::chrono::steady_clock::now();
  if (now - last_draw_ < std::chrono::milliseconds(100) && done_ < total_) return;
  last_draw_ = now;
  draw(suffix);
}

void ProgressBar::finish(const std::string& suffix) {
  if (finished_) return;
  finished_ = true;
  done_ = total_;
  draw(suffix);
  if (enabled_) std::fputc('\n', stderr);
}

void ProgressBar::draw(const std::string& suffix) {
  if (!enabled_) return;
  constexpr int kWidth = 30;
  double frac = total_ > 0 ? static_cast<double>(done_) / static_cast<double>(total_) : 1.0;
  if (frac > 1.0) frac = 1.0;
  int filled = static_cast<int>(frac * kWidth);
  double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::string bar(filled, '#');
  bar.append(kWidth - filled, '.');
  std::fprintf(stderr, "\r%s [%s] %3.0f%% %lld/%lld %.1fs %s\x1b[K", label_.c_str(), bar.c_str(),
               frac * 100.0, static_cast<long long>(done_), static_cast<long long>(total_), elapsed,
               suffix.c_str());
  std::fflush(stderr);
}

}  // namespace seer
