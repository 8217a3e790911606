#pragma once
// Vector width selection and horizontal sums shared by the kernels. seer builds with
// -march=native by default; every kernel also has a scalar path for machines
// without AVX2 (checked with the compiler's __AVX2__ / __AVX512F__ macros).
#if defined(__AVX2__) || defined(__AVX512F__)
// GCC 12 reports its own _mm512_undefined_* placeholders inside the intrinsic
// headers as maybe-uninitialized (a known false positive); clang has no such group.
#if !defined(__clang__)
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#pragma GCC diagnostic ignored "-Wuninitialized"
#endif
#include <immintrin.h>
#endif

namespace seer::simd {

#if defined(__AVX2__) && defined(__FMA__)
inline float hsum(__m256 v) {
  __m128 lo = _mm256_castps256_ps128(v);
  __m128 hi = _mm256_extractf128_ps(v, 1);
  lo = _mm_add_ps(lo, hi);
  lo = _mm_add_ps(lo, _mm_movehl_ps(lo, lo));
  lo = _mm_add_ss(lo, _mm_movehdup_ps(lo));
  return _mm_cvtss_f32(lo);
}
#endif

#if defined(__AVX512F__)
inline float hsum(__m512 v) { return _mm512_reduce_add_ps(v); }
#endif

// Dot product of two f32 vectors.
inline float dot(const float* a, const float* b, long n) {
  long i = 0;
  float s = 0.0f;
#if defined(__AVX512F__)
  __m512 acc0 = _mm512_setzero_ps(), acc1 = _mm512_setzero_ps();
  for (; i + 32 <= n; i += 32) {
    acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
    acc1 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i + 16), _mm512_loadu_ps(b + i + 16), acc1);
  }
  for (; i + 16 <= n; i += 16) acc0 = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc0);
  s = hsum(_mm512_add_ps(acc0, acc1));
#elif defined(__AVX2__) && defined(__FMA__)
  __m256 acc0 = _mm256_setzero_ps(), acc1 = _mm256_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
    acc1 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i + 8), _mm256_loadu_ps(b + i + 8), acc1);
  }
  for (; i + 8 <= n; i += 8) acc0 = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc0);
  s = hsum(_mm256_add_ps(acc0, acc1));
#endif
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// y += a * x
inline void axpy(float a, const float* x, float* y, long n) {
  long i = 0;
#if defined(__AVX512F__)
  __m512 va = _mm512_set1_ps(a);
  for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, _mm512_fmadd_ps(va, _mm512_loadu_ps(x + i), _mm512_loadu_ps(y + i)));
#elif defined(__AVX2__) && defined(__FMA__)
  __m256 va = _mm256_set1_ps(a);
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, _mm256_fmadd_ps(va, _mm256_loadu_ps(x + i), _mm256_loadu_ps(y + i)));
#endif
  for (; i < n; ++i) y[i] += a * x[i];
}

}  // namespace seer::simd
