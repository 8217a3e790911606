#pragma once
// Time is injected (docs/architecture.md §2): the server runs on WallClock, the simulator on
// VirtualClock. Nothing below the frontend reads the system time directly.
#include <chrono>

namespace seer {

class Clock {
 public:
  virtual ~Clock() = default;
  // Seconds since an arbitrary fixed origin.
  virtual double now() const = 0;
};

class WallClock final : public Clock {
 public:
  WallClock() : origin_(std::chrono::steady_clock::now()) {}
  double now() const override {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
  }

 private:
  std::chrono::steady_clock::time_point origin_;
};

class VirtualClock final : public Clock {
 public:
  double now() const override { return now_; }
  void advance(double seconds) { now_ += seconds; }
  void advance_to(double t) {
    if (t > now_) now_ = t;
  }

 private:
  double now_ = 0.0;
};

}  // namespace seer
