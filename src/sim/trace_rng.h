#pragma once
// A seeded random source whose draws are the same on every platform (the standard
// library's distributions are implementation-defined), so a trace generated with a
// seed is reproducible anywhere.
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

namespace seer {

class TraceRng {
 public:
  explicit TraceRng(uint64_t seed) : gen_(seed) {}

  double uniform() { return static_cast<double>(gen_() >> 11) * 0x1.0p-53; }  // [0, 1)
  // Integer in [0, n), n > 0 (multiply-shift; the bias is below 2^-32 for n < 2^32).
  uint64_t below(uint64_t n) { return static_cast<uint64_t>((static_cast<unsigned __int128>(gen_()) * n) >> 64); }
  double exponential(double mean) { return -mean * std::log1p(-uniform()); }
  double normal() {  // Box-Muller
    double u1 = 1.0 - uniform(), u2 = uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
  }
  // Marsaglia-Tsang; shape < 1 as gamma(shape + 1) * U^(1/shape).
  double gamma(double shape, double scale) {
    if (shape < 1.0) return gamma(shape + 1.0, scale) * std::pow(1.0 - uniform(), 1.0 / shape);
    const double d = shape - 1.0 / 3.0, c = 1.0 / std::sqrt(9.0 * d);
    for (;;) {
      double x = normal(), v = 1.0 + c * x;
      if (v <= 0) continue;
      v = v * v * v;
      double u = 1.0 - uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
    }
  }
  template <typename T>
  void shuffle(std::vector<T>& v) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[below(i)]);
  }

 private:
  std::mt19937_64 gen_;
};

}  // namespace seer
