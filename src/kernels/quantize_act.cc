#include "kernels/quantize_act.h"

#include <cmath>

#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

float max_abs(const float* x, int64_t n) {
#if defined(__AVX2__)
  const __m256 sign_mask = _mm256_set1_ps(-0.0f);
  __m256 amax = _mm256_setzero_ps();
  for (int64_t j = 0; j < n; j += 8) amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, _mm256_loadu_ps(x + j)));
  __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
  m = _mm_max_ps(m, _mm_movehl_ps(m, m));
  m = _mm_max_ss(m, _mm_movehdup_ps(m));
  return _mm_cvtss_f32(m);
#else
  float m = 0.0f;
  for (int64_t j = 0; j < n; ++j) m = std::fmax(m, std::fabs(x[j]));
  return m;
#endif
}

// q[j] = x[j] * inv rounded to nearest even, for 32 elements; returns sum(q).
int32_t round_32(const float* x, float inv, int8_t* q) {
#if defined(__AVX2__)
  const __m256 vinv = _mm256_set1_ps(inv);
  __m256i i32[4];
  for (int j = 0; j < 4; ++j) i32[j] = _mm256_cvtps_epi32(_mm256_mul_ps(_mm256_loadu_ps(x + 8 * j), vinv));
  // Pack 4 x 8 int32 -> 32 int8; packs interleave 128-bit lanes, fixed by the permute.
  const __m256i p16a = _mm256_packs_epi32(i32[0], i32[1]);
  const __m256i p16b = _mm256_packs_epi32(i32[2], i32[3]);
  __m256i p8 = _mm256_packs_epi16(p16a, p16b);
  p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), p8);
  __m256i s = _mm256_add_epi32(_mm256_add_epi32(i32[0], i32[1]), _mm256_add_epi32(i32[2], i32[3]));
  __m128i s4 = _mm_add_epi32(_mm256_castsi256_si128(s), _mm256_extracti128_si256(s, 1));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0x4e));
  s4 = _mm_add_epi32(s4, _mm_shuffle_epi32(s4, 0xb1));
  return _mm_cvtsi128_si32(s4);
#else
  int32_t sum = 0;
  for (int j = 0; j < kQK; ++j) {
    q[j] = static_cast<int8_t>(std::nearbyint(x[j] * inv));
    sum += q[j];
  }
  return sum;
#endif
}

}  // namespace

void quantize_act_q8(const float* x, int64_t k, int8_t* q, float* d, float* s) {
  for (int64_t b = 0; b < k / kQK; ++b, x += kQK, q += kQK) {
    const float scale = max_abs(x, kQK) / 127.0f;
    d[b] = scale;
    const int32_t sum = round_32(x, scale != 0.0f ? 1.0f / scale : 0.0f, q);
    if (s) s[b] = scale * static_cast<float>(sum);
  }
}

void dequantize_act_q8(const int8_t* q, const float* d, int64_t k, float* x) {
  for (int64_t b = 0; b < k / kQK; ++b)
    for (int j = 0; j < kQK; ++j) x[b * kQK + j] = q[b * kQK + j] * d[b];
}

void quantize_act_q8k(const float* x, int64_t k, BlockQ8_K* y) {
  for (int64_t b = 0; b < k / kQK_K; ++b, x += kQK_K) {
    const float scale = max_abs(x, kQK_K) / 127.0f;
    const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
    y[b].d = scale;
    for (int j = 0; j < kQK_K; j += kQK) round_32(x + j, inv, y[b].qs + j);
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += y[b].qs[16 * g + j];
      y[b].bsums[g] = static_cast<int16_t>(sum);
    }
  }
}

void dequantize_act_q8k(const BlockQ8_K* y, int64_t k, float* x) {
  for (int64_t b = 0; b < k / kQK_K; ++b)
    for (int j = 0; j < kQK_K; ++j) x[b * kQK_K + j] = y[b].qs[j] * y[b].d;
}

}  // namespace seer
