#pragma once
// Random quantized weights and quantized activations for the kernel tests
// (qdot_test.cc, qgemm_test.cc): random bytes with finite fp16 scales, activations
// from a normal distribution quantized by quantize_act.h.
#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dot_kernels.h"
#include "kernels/quantize_act.h"
#include "model/quant.h"

namespace seer {

// Byte offsets of the fp16 fields of a block.
inline std::vector<size_t> fp16_fields(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_1: return {offsetof(BlockQ4_1, d), offsetof(BlockQ4_1, m)};
    case GgmlType::Q5_1: return {offsetof(BlockQ5_1, d), offsetof(BlockQ5_1, m)};
    case GgmlType::Q2_K: return {offsetof(BlockQ2_K, d), offsetof(BlockQ2_K, dmin)};
    case GgmlType::Q3_K: return {offsetof(BlockQ3_K, d)};
    case GgmlType::Q4_K: return {offsetof(BlockQ4_K, d), offsetof(BlockQ4_K, dmin)};
    case GgmlType::Q5_K: return {offsetof(BlockQ5_K, d), offsetof(BlockQ5_K, dmin)};
    case GgmlType::Q6_K: return {offsetof(BlockQ6_K, d)};
    default: return {0};  // Q8_0, Q4_0, Q5_0, IQ4_NL, IQ4_XS: d first
  }
}

struct RandomWeight {
  std::vector<uint8_t> bytes;
  WeightTensor t;
};

inline RandomWeight random_weight(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  const QDotKernel& k = *qdot_kernel(type, QIsa::Scalar);
  RandomWeight w;
  w.bytes.resize(ggml_row_bytes(type, cols) * rows);
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-1.0f, 1.0f);
  for (auto& b : w.bytes) b = static_cast<uint8_t>(byte(rng));
  for (size_t off = 0; off < w.bytes.size(); off += k.block_bytes)
    for (size_t f : fp16_fields(type)) {
      const uint16_t h = fp32_to_fp16(scale(rng) * 0.05f);
      std::memcpy(&w.bytes[off + f], &h, 2);
    }
  w.t = WeightTensor{"w", type, rows, cols, w.bytes.data(), w.bytes.size()};
  return w;
}

struct Acts {
  std::vector<int8_t> q;
  std::vector<float> d, s;
  std::vector<BlockQ8_K> k;
  QuantActs view() const { return {q.data(), d.data(), s.data(), k.data()}; }
};

inline Acts random_acts(int64_t n, int64_t k, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> x(n * k);
  for (auto& v : x) v = dist(rng);
  Acts a;
  a.q.resize(n * k);
  a.d.resize(n * k / kQK);
  a.s.resize(n * k / kQK);
  a.k.resize(n * k / kQK_K);
  for (int64_t r = 0; r < n; ++r) {
    quantize_act_q8(&x[r * k], k, &a.q[r * k], &a.d[r * k / kQK], &a.s[r * k / kQK]);
    quantize_act_q8k(&x[r * k], k, &a.k[r * k / kQK_K]);
  }
  return a;
}

// Sum over blocks of |scalar value of the block| for row r, column c: the scale of
// the f32 rounding error.
inline float magnitude(const QDotKernel& ref, const RandomWeight& w, int64_t r, const Acts& a, int64_t c) {
  const int64_t k = w.t.cols, nb = k / ref.block_elems;
  const auto* row = w.bytes.data() + r * ggml_row_bytes(w.t.type, k);
  float mag = 0;
  for (int64_t b = 0; b < nb; ++b) {
    QActCols cols{};
    cols.q[0] = a.q.data() + c * k + b * kQK;
    cols.d[0] = a.d.data() + c * (k / kQK) + b;
    cols.s[0] = a.s.data() + c * (k / kQK) + b;
    cols.k[0] = a.k.data() + c * (k / kQK_K) + b;
    float v;
    ref.tile(row + b * ref.block_bytes, 1, cols, 1, &v);
    mag += std::fabs(v);
  }
  return mag;
}

inline int64_t test_cols(GgmlType t) { return qdot_kernel(t, QIsa::Scalar)->block_elems == kQK ? 1120 : 2560; }

}  // namespace seer
