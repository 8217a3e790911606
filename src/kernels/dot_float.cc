// Dot kernels for F32/F16/BF16 weights (see dot_kernels.h). The 16-bit types are
// widened to f32 in registers (F16C / a shift for bf16), never in memory.
#include <cstring>

#include "common/error.h"
#include "kernels/dot_kernels.h"
#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

struct F32Traits {
  using T = float;
  static float scalar(T v) { return v; }
#if defined(__AVX512F__)
  static __m512 load(const T* p) { return _mm512_loadu_ps(p); }
#elif defined(__AVX2__) && defined(__FMA__)
  static __m256 load(const T* p) { return _mm256_loadu_ps(p); }
#endif
};

struct F16Traits {
  using T = uint16_t;
  static float scalar(T v) { return fp16_to_fp32(v); }
#if defined(__AVX512F__)
  static __m512 load(const T* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static __m256 load(const T* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#endif
};

struct Bf16Traits {
  using T = uint16_t;
  static float scalar(T v) { return bf16_to_fp32(v); }
#if defined(__AVX512F__)
  static __m512 load(const T* p) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
#elif defined(__AVX2__) && defined(__FMA__)
  static __m256 load(const T* p) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
#endif
};

#if defined(__AVX512F__)
using Vec = __m512;
constexpr int kW = 16;
inline Vec vzero() { return _mm512_setzero_ps(); }
inline Vec vload(const float* p) { return _mm512_loadu_ps(p); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm512_fmadd_ps(a, b, c); }
inline Vec vadd(Vec a, Vec b) { return _mm512_add_ps(a, b); }
#define SEER_HAVE_VEC 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
using Vec = __m256;
constexpr int kW = 8;
inline Vec vzero() { return _mm256_setzero_ps(); }
inline Vec vload(const float* p) { return _mm256_loadu_ps(p); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
inline Vec vadd(Vec a, Vec b) { return _mm256_add_ps(a, b); }
#define SEER_HAVE_VEC 1
#endif

// out[c] = dot(w, x[c]) for c < NC.
template <class Tr, int NC>
inline void dot_row(const typename Tr::T* w, const float* const* x, int64_t k, float* out) {
  int64_t i = 0;
  float s[NC] = {};
#ifdef SEER_HAVE_VEC
  // Enough independent accumulators to hide the FMA latency when NC is small.
  constexpr int U = NC == 1 ? 4 : 2;
  Vec acc[NC][U];
#pragma GCC unroll 4
  for (int c = 0; c < NC; ++c)
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) acc[c][u] = vzero();
  for (; i + kW * U <= k; i += kW * U) {
#pragma GCC unroll 4
    for (int u = 0; u < U; ++u) {
      const Vec wv = Tr::load(w + i + kW * u);
#pragma GCC unroll 4
      for (int c = 0; c < NC; ++c) acc[c][u] = vfma(wv, vload(x[c] + i + kW * u), acc[c][u]);
    }
  }
  for (; i + kW <= k; i += kW) {
    const Vec wv = Tr::load(w + i);
#pragma GCC unroll 4
    for (int c = 0; c < NC; ++c) acc[c][0] = vfma(wv, vload(x[c] + i), acc[c][0]);
  }
#pragma GCC unroll 4
  for (int c = 0; c < NC; ++c) {
    Vec t = acc[c][0];
#pragma GCC unroll 4
    for (int u = 1; u < U; ++u) t = vadd(t, acc[c][u]);
    s[c] = simd::hsum(t);
  }
#endif
  for (; i < k; ++i) {
    const float wv = Tr::scalar(w[i]);
    for (int c = 0; c < NC; ++c) s[c] += wv * x[c][i];
  }
  for (int c = 0; c < NC; ++c) out[c] = s[c];
}

template <class Tr>
void dot_rows(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y, int64_t ldy) {
  using T = typename Tr::T;
  const int64_t k = w.cols;
  const T* base = static_cast<const T*>(w.data);
  for (int64_t r = r0; r < r1; ++r) {
    const T* row = base + r * k;
    for (int64_t c0 = 0; c0 < n; c0 += 4) {
      const float* xs[4];
      float out[4];
      const int nc = static_cast<int>(std::min<int64_t>(4, n - c0));
      for (int c = 0; c < nc; ++c) xs[c] = x + (c0 + c) * k;
      switch (nc) {
        case 4: dot_row<Tr, 4>(row, xs, k, out); break;
        case 3: dot_row<Tr, 3>(row, xs, k, out); break;
        case 2: dot_row<Tr, 2>(row, xs, k, out); break;
        default: dot_row<Tr, 1>(row, xs, k, out); break;
      }
      for (int c = 0; c < nc; ++c) y[(c0 + c) * ldy + r] = out[c];
    }
  }
}

}  // namespace

void dot_rows_float(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                    int64_t ldy) {
  switch (w.type) {
    case GgmlType::F32: return dot_rows<F32Traits>(w, r0, r1, x, n, y, ldy);
    case GgmlType::F16: return dot_rows<F16Traits>(w, r0, r1, x, n, y, ldy);
    case GgmlType::BF16: return dot_rows<Bf16Traits>(w, r0, r1, x, n, y, ldy);
    default: fail("dot_rows_float: tensor '{}' has type {}", w.name, ggml_type_name(w.type));
  }
}

}  // namespace seer
