#include "kernels/quantize_act.h"

#include <cmath>

#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {

void quantize_act_q8(const float* x, int64_t k, int8_t* q, float* d) {
  for (int64_t b = 0; b < k / kQK; ++b, x += kQK, q += kQK) {
#if defined(__AVX2__)
    const __m256 sign_mask = _mm256_set1_ps(-0.0f);
    __m256 v[4];
    __m256 amax = _mm256_setzero_ps();
    for (int j = 0; j < 4; ++j) {
      v[j] = _mm256_loadu_ps(x + 8 * j);
      amax = _mm256_max_ps(amax, _mm256_andnot_ps(sign_mask, v[j]));
    }
    __m128 m = _mm_max_ps(_mm256_castps256_ps128(amax), _mm256_extractf128_ps(amax, 1));
    m = _mm_max_ps(m, _mm_movehl_ps(m, m));
    m = _mm_max_ss(m, _mm_movehdup_ps(m));
    const float max_abs = _mm_cvtss_f32(m);
    const float scale = max_abs / 127.0f;
    d[b] = scale;
    const __m256 inv = _mm256_set1_ps(scale != 0.0f ? 1.0f / scale : 0.0f);
    __m256i i32[4];
    for (int j = 0; j < 4; ++j) i32[j] = _mm256_cvtps_epi32(_mm256_mul_ps(v[j], inv));  // nearest even
    // Pack 4 x 8 int32 -> 32 int8; packs interleave 128-bit lanes, fixed by the permute.
    __m256i p16a = _mm256_packs_epi32(i32[0], i32[1]);
    __m256i p16b = _mm256_packs_epi32(i32[2], i32[3]);
    __m256i p8 = _mm256_packs_epi16(p16a, p16b);
    p8 = _mm256_permutevar8x32_epi32(p8, _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7));
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(q), p8);
#else
    float max_abs = 0.0f;
    for (int j = 0; j < kQK; ++j) max_abs = std::fmax(max_abs, std::fabs(x[j]));
    const float scale = max_abs / 127.0f;
    d[b] = scale;
    const float inv = scale != 0.0f ? 1.0f / scale : 0.0f;
    for (int j = 0; j < kQK; ++j) q[j] = static_cast<int8_t>(std::nearbyint(x[j] * inv));
#endif
  }
}

void dequantize_act_q8(const int8_t* q, const float* d, int64_t k, float* x) {
  for (int64_t b = 0; b < k / kQK; ++b)
    for (int j = 0; j < kQK; ++j) x[b * kQK + j] = q[b * kQK + j] * d[b];
}

}  // namespace seer
