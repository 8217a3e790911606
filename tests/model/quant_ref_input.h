#pragma once
// The f32 matrices the quantization reference vectors are made from
// (tests/data/quant_ref/, written by scripts/reference/make_quant_refs.sh, whose
// harness includes this header): weight-like rows from a fixed seed, computed with
// integer arithmetic and exact float operations so every machine makes the same bits.
#include <cstdint>
#include <cstring>
#include <vector>

namespace seer::quant_ref {

inline uint64_t splitmix64(uint64_t& s) {
  uint64_t z = (s += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, 1), 24 random bits (exact in a float).
inline float uniform(uint64_t& s) { return static_cast<float>(splitmix64(s) >> 40) * (1.0f / 16777216.0f); }

// Row r: roughly normal values (a sum of four uniforms) with a per-row scale; rows
// with r % 4 == 3 get an outlier every 61 elements (8x), as real weights have some.
// Rows r % 4 == 2 are shifted by about half their scale (tests the formats with a
// minimum). Every addition comes before the multiplications, so no compiler can
// fuse one into an FMA and change the bits.
inline std::vector<float> make_input(int64_t rows, int64_t cols, uint64_t seed) {
  std::vector<float> x(static_cast<size_t>(rows * cols));
  uint64_t s = seed;
  for (int64_t r = 0; r < rows; ++r) {
    const float scale = 0.02f * static_cast<float>(1 + r % 5);
    const float center = r % 4 == 2 ? 1.7f : 2.0f;
    for (int64_t c = 0; c < cols; ++c) {
      float sum = uniform(s) + uniform(s);
      sum += uniform(s) + uniform(s);
      float v = (sum - center) * 1.7320508f;
      if (r % 4 == 3 && c % 61 == 7) v *= 8.0f;
      x[static_cast<size_t>(r * cols + c)] = v * scale;
    }
  }
  return x;
}

// FNV-1a over the bits of the values: the harness records it so a test notices a
// generator that no longer makes the input the vectors were made from.
inline uint64_t input_hash(const std::vector<float>& x) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (float f : x) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    for (int i = 0; i < 4; ++i) {
      h ^= (bits >> (8 * i)) & 0xff;
      h *= 0x100000001b3ull;
    }
  }
  return h;
}

// The two inputs: a small one whose quantized bytes and ggml dequantization are
// committed per type, and a larger one for which only ggml's RMSE is committed.
struct InputShape {
  int64_t rows, cols;
  uint64_t seed;
};
inline constexpr InputShape kExactInput{4, 512, 1};
inline constexpr InputShape kRmseInput{64, 4096, 2};

}  // namespace seer::quant_ref
