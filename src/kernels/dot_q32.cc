// SIMD dot kernels of the 32-element types Q4_1, Q5_0, Q5_1 and IQ4_NL against Q8
// activations (qdot.h). Each weight block is decoded once per row into 32 unsigned
// quants u and two factors so that, for a column with scale dx and s = dx * sum(x),
//   block . x = d * dx * (u . x) + coef * s
// (Q4_1/Q5_1: coef = m; Q5_0: u = w + 16, coef = -16 d; IQ4_NL with VNNI: u = w + 128,
// coef = -128 d). u . x is one dpbusd (VNNI) or maddubs + madd (AVX2). IQ4_NL on AVX2
// keeps the signed values (u = w + 128 would saturate maddubs) and uses |w| . sign(x, w).
// With AVX-512 VNNI, Q5_0 and IQ4_NL take the 512-bit kernel (dot_rows16_avx512.cc); these
// entries serve AVX2 / AVX-VNNI machines and the tests.
#include <type_traits>

#include "kernels/qdot.h"
#include "kernels/qdot_simd.h"

namespace seer {
namespace {

#ifdef SEER_QDOT_AVX2
using namespace qsimd;

struct Decoded {
  __m256i u;  // 32 quants (u8), or the signed values when `signed_values`
  float d;
  float coef;
};

template <bool V>
inline Decoded decode(const BlockQ4_1& b) {
  return {nibbles32(b.qs), fp16(b.d), fp16(b.m)};
}
template <bool V>
inline Decoded decode(const BlockQ5_0& b) {
  const float d = fp16(b.d);
  return {five_bit(b.qs, b.qh), d, -16.0f * d};
}
template <bool V>
inline Decoded decode(const BlockQ5_1& b) {
  return {five_bit(b.qs, b.qh), fp16(b.d), fp16(b.m)};
}
template <bool V>
inline Decoded decode(const BlockIQ4_NL& b) {
  const float d = fp16(b.d);
  const __m256i w = _mm256_shuffle_epi8(iq4nl_table(), nibbles32(b.qs));
  if constexpr (V) return {_mm256_xor_si256(w, _mm256_set1_epi8(-128)), d, -128.0f * d};
  return {w, d, 0.0f};
}

template <class Block, bool V>
constexpr bool kSignedValues = std::is_same_v<Block, BlockIQ4_NL> && !V;
template <class Block>
constexpr bool kHasCoef = !std::is_same_v<Block, BlockIQ4_NL>;

template <class Block, bool V, int C>
void tile(const Block* w, int64_t nb, const QActCols& x, float* out) {
  constexpr bool kUseCoef = kHasCoef<Block> || V;
  __m256 acc[C];
  float accs[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    acc[c] = _mm256_setzero_ps();
    accs[c] = 0.0f;
  }
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<sizeof(Block)>(w + b);
    const Decoded p = decode<V>(w[b]);
    __m256i abs_w;
    if constexpr (kSignedValues<Block, V>) abs_w = _mm256_sign_epi8(p.u, p.u);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q[c] + b * kQK));
      __m256i dot;
      if constexpr (kSignedValues<Block, V>)
        dot = dot_u8s8<V>(_mm256_setzero_si256(), abs_w, _mm256_sign_epi8(xv, p.u));
      else
        dot = dot_u8s8<V>(_mm256_setzero_si256(), p.u, xv);
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(p.d * x.d[c][b]), _mm256_cvtepi32_ps(dot), acc[c]);
      if constexpr (kUseCoef) accs[c] += p.coef * x.s[c][b];
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = simd::hsum(acc[c]) + accs[c];
}

template <class Block, bool V>
void tile_n(const void* w, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* b = static_cast<const Block*>(w);
  switch (nc) {
    case 4: return tile<Block, V, 4>(b, nb, x, out);
    case 3: return tile<Block, V, 3>(b, nb, x, out);
    case 2: return tile<Block, V, 2>(b, nb, x, out);
    default: return tile<Block, V, 1>(b, nb, x, out);
  }
}

// The GEMM tile (qdot.h): each of the R rows' blocks decoded once per block, each
// column's activations loaded once for the R rows; per row and column the
// instructions of `tile` in its order, so the same bits.
constexpr int kRows = 4, kCols = 4;

template <class Block, bool V, int C>
void gemm_tile(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  constexpr int R = kRows;
  constexpr bool kUseCoef = kHasCoef<Block> || V;
  const Block* w[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) w[r] = static_cast<const Block*>(wp[r]);
  __m256 acc[R][C];
  float accs[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      acc[r][c] = _mm256_setzero_ps();
      accs[r][c] = 0.0f;
    }
  for (int64_t b = 0; b < nb; ++b) {
    Decoded p[R];
    __m256i abs_w[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      prefetch_ahead<sizeof(Block)>(w[r] + b);
      p[r] = decode<V>(w[r][b]);
      if constexpr (kSignedValues<Block, V>) abs_w[r] = _mm256_sign_epi8(p[r].u, p[r].u);
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x.q + c * x.q_stride + b * kQK));
      const float xd = x.d[c * x.d_stride + b];
      const float xs = x.s[c * x.d_stride + b];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        __m256i dot;
        if constexpr (kSignedValues<Block, V>)
          dot = dot_u8s8<V>(_mm256_setzero_si256(), abs_w[r], _mm256_sign_epi8(xv, p[r].u));
        else
          dot = dot_u8s8<V>(_mm256_setzero_si256(), p[r].u, xv);
        acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(p[r].d * xd), _mm256_cvtepi32_ps(dot), acc[r][c]);
        if constexpr (kUseCoef) accs[r][c] += p[r].coef * xs;
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) out[r * kQGemmMaxC + c] = simd::hsum(acc[r][c]) + accs[r][c];
}

template <class Block, bool V, int C = kCols>
void gemm_n(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out) {
  if constexpr (C > 1)
    if (nc < C) return gemm_n<Block, V, C - 1>(w, nb, x, nc, out);
  gemm_tile<Block, V, C>(w, nb, x, out);
}
static_assert(kRows <= kQGemmMaxR && kCols <= kQGemmMaxC);

template <class Block, bool V>
constexpr QDotKernel kKernel{&tile_n<Block, V>, ActKind::Q8, kQK, sizeof(Block), &gemm_n<Block, V>, kRows, kCols};

template <bool V>
const QDotKernel* table(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_1: return &kKernel<BlockQ4_1, V>;
    case GgmlType::Q5_0: return &kKernel<BlockQ5_0, V>;
    case GgmlType::Q5_1: return &kKernel<BlockQ5_1, V>;
    case GgmlType::IQ4_NL: return &kKernel<BlockIQ4_NL, V>;
    default: return nullptr;
  }
}
#endif

}  // namespace

const QDotKernel* qdot_kernel_q32(GgmlType t, QIsa isa) {
#ifdef SEER_QDOT_AVX2
  if (isa == QIsa::Avx2) return table<false>(t);
#ifdef SEER_QDOT_VNNI
  if (isa == QIsa::Vnni) return table<true>(t);
#endif
#endif
  (void)t;
  (void)isa;
  return nullptr;
}

}  // namespace seer
