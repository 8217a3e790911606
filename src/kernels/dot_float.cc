// Dot kernels for F32/F16/BF16 weights (see dot_kernels.h). The 16-bit types are
// widened to f32 in registers (F16C / a shift for bf16), never in memory.
#include <algorithm>
#include <cmath>
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
#define SEER_HAVE_VEC 1
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
using Vec = __m256;
constexpr int kW = 8;
inline Vec vzero() { return _mm256_setzero_ps(); }
inline Vec vload(const float* p) { return _mm256_loadu_ps(p); }
inline Vec vfma(Vec a, Vec b, Vec c) { return _mm256_fmadd_ps(a, b, c); }
#define SEER_HAVE_VEC 1
#endif

#ifdef SEER_HAVE_VEC
// Rows per register tile: R x C accumulators plus C activation vectors must fit the
// register file (32 zmm with AVX-512, 16 ymm with AVX2).
constexpr int kMaxR = kW == 16 ? 4 : 2;
#else
constexpr int kMaxR = 4;
#endif
constexpr int kMaxC = 4;

// out[r][c] = dot(w[r], x[c]) over k elements for an R x C tile: each weight vector
// is loaded (and widened) once for C columns and each activation vector once for R
// rows, so a step costs R + C loads for R * C FMAs. One accumulator per (r, c), so
// an output's summation order is the same whatever tile it is computed in.
template <class Tr, int R, int C>
inline void dot_tile(const typename Tr::T* const* w, const float* const* x, int64_t k, float* out) {
  int64_t i = 0;
  float s[R][C] = {};
#ifdef SEER_HAVE_VEC
  Vec acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = vzero();
  for (; i + kW <= k; i += kW) {
    Vec xv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) xv[c] = vload(x[c] + i);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Vec wv = Tr::load(w[r] + i);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[r][c] = vfma(wv, xv[c], acc[r][c]);
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) s[r][c] = simd::hsum(acc[r][c]);
#endif
  // The tail (k not a multiple of the vector width: stories260K's FFN of 172) as
  // explicit FMAs: written as s += w * x, GCC contracted it into FMAs in some R x C
  // instantiations and not in others, so a column's bits depended on the batch
  // (Zen 4, -march=native; tests/kernels/matmul_test.cc, "tail").
  for (; i < k; ++i)
    for (int r = 0; r < R; ++r) {
      const float wv = Tr::scalar(w[r][i]);
      for (int c = 0; c < C; ++c) s[r][c] = std::fma(wv, x[c][i], s[r][c]);
    }
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) out[r * kMaxC + c] = s[r][c];
}

template <class Tr, int R>
inline void dot_tile_c(int nc, const typename Tr::T* const* w, const float* const* x, int64_t k, float* out) {
  switch (nc) {
    case 4: return dot_tile<Tr, R, 4>(w, x, k, out);
    case 3: return dot_tile<Tr, R, 3>(w, x, k, out);
    case 2: return dot_tile<Tr, R, 2>(w, x, k, out);
    default: return dot_tile<Tr, R, 1>(w, x, k, out);
  }
}

// out[r * kMaxC + c] for nr <= kMaxR rows and nc <= kMaxC columns.
template <class Tr>
void dot_tile_n(int nr, int nc, const typename Tr::T* const* w, const float* const* x, int64_t k, float* out) {
  if constexpr (kMaxR >= 4) {
    if (nr == 4) return dot_tile_c<Tr, 4>(nc, w, x, k, out);
    if (nr == 3) return dot_tile_c<Tr, 3>(nc, w, x, k, out);
  }
  if (nr == 2) return dot_tile_c<Tr, 2>(nc, w, x, k, out);
  dot_tile_c<Tr, 1>(nc, w, x, k, out);
}

// Rows are processed in groups of kRowGroup and k in chunks of kChunk elements: the
// activations of every column for one chunk stay in L1 while the group's weights
// stream through (without chunking, 8 columns x 5632 elements of x fell out of L1 for
// every weight row). Within a chunk, register tiles of kMaxR rows x kMaxC columns.
// The chunk size is fixed, so each output's summation order, and therefore its
// value, does not depend on how many columns the batch has.
constexpr int64_t kChunk = 1024;

template <class Tr>
void dot_rows(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y, int64_t ldy) {
  using T = typename Tr::T;
  const int64_t k = w.cols;
  const T* base = static_cast<const T*>(w.data);
  thread_local std::vector<float> acc;  // per pool thread, reused across calls
  const int64_t group = row_group(w.type, n);
  for (int64_t g0 = r0; g0 < r1; g0 += group) {
    const int64_t g1 = std::min(r1, g0 + group);
    acc.assign(static_cast<size_t>((g1 - g0) * n), 0.0f);
    for (int64_t k0 = 0; k0 < k; k0 += kChunk) {
      const int64_t kc = std::min(kChunk, k - k0);
      for (int64_t t0 = g0; t0 < g1; t0 += kMaxR) {
        const int nr = static_cast<int>(std::min<int64_t>(kMaxR, g1 - t0));
        const T* rows[kMaxR];
        for (int r = 0; r < nr; ++r) rows[r] = base + (t0 + r) * k + k0;
        for (int64_t c0 = 0; c0 < n; c0 += kMaxC) {
          const int nc = static_cast<int>(std::min<int64_t>(kMaxC, n - c0));
          const float* xs[kMaxC];
          float out[kMaxR * kMaxC];
          for (int c = 0; c < nc; ++c) xs[c] = x + (c0 + c) * k + k0;
          dot_tile_n<Tr>(nr, nc, rows, xs, kc, out);
          for (int r = 0; r < nr; ++r)
            for (int c = 0; c < nc; ++c) acc[(t0 - g0 + r) * n + c0 + c] += out[r * kMaxC + c];
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
