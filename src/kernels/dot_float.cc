// Dot kernels for F32/F16/BF16 weights (see dot_kernels.h). The 16-bit types are
// widened to f32 in registers (F16C / a shift for bf16), never in memory.
#include <algorithm>
#include <cstring>
#include <vector>

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
  // Two independent accumulators per column (measured faster than four at NC = 4,
  // and enough for memory-bound decode at NC = 1); the same count for every NC keeps
  // a column's summation order, and so its result, independent of the batch.
  constexpr int U = 2;
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

// Rows are processed in groups of kRowGroup and k in chunks of kChunk elements: the
// activations of every column for one chunk stay in L1 while the group's weights
// stream through (without chunking, 8 columns x 5632 elements of x fell out of L1 for
// every weight row). The chunk size is fixed, so each output's summation order, and
// therefore its value, does not depend on how many columns the batch has.
constexpr int64_t kChunk = 1024;
constexpr int64_t kRowGroup = 8;

template <class Tr>
void dot_rows(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y, int64_t ldy) {
  using T = typename Tr::T;
  const int64_t k = w.cols;
  const T* base = static_cast<const T*>(w.data);
  thread_local std::vector<float> acc;  // per pool thread, reused across calls
  // One or two columns: stream each weight row start to end (the prefetchers' best
  // case; x is small). More columns: groups of rows share each x chunk from L1.
  const int64_t group = n <= 2 ? 1 : kRowGroup;
  for (int64_t g0 = r0; g0 < r1; g0 += group) {
    const int64_t g1 = std::min(r1, g0 + group);
    acc.assign(static_cast<size_t>((g1 - g0) * n), 0.0f);
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
      const int64_t kc = std::min(kChunk, k - k0);
      for (int64_t r = g0; r < g1; ++r) {
        const T* row = base + r * k + k0;
        for (int64_t c0 = 0; c0 < n; c0 += 4) {
          const float* xs[4];
          float out[4];
          const int nc = static_cast<int>(std::min<int64_t>(4, n - c0));
          for (int c = 0; c < nc; ++c) xs[c] = x + (c0 + c) * k + k0;
          switch (nc) {
            case 4: dot_row<Tr, 4>(row, xs, kc, out); break;
            case 3: dot_row<Tr, 3>(row, xs, kc, out); break;
            case 2: dot_row<Tr, 2>(row, xs, kc, out); break;
            default: dot_row<Tr, 1>(row, xs, kc, out); break;
          }
          for (int c = 0; c < nc; ++c) acc[(r - g0) * n + c0 + c] += out[c];
        }
      }
    }
    for (int64_t r = g0; r < g1; ++r)
      for (int64_t c = 0; c < n; ++c) y[c * ldy + r] = acc[(r - g0) * n + c];
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
