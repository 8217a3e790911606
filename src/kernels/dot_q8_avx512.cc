// 512-bit VNNI dot kernels of Q8_0 and Q4_0 (qdot.h): two 32-element blocks per
// instruction. Per pair of blocks and column: one load of 64 activation bytes, one
// dpbusd of (x + 128) as u8 against the signed weights started from -128 * sum(w)
// (as the 256-bit VNNI kernel), one conversion and one FMA with the pair's scales
// d_w * d_x in the two 256-bit halves; about half the instructions per block of the
// 256-bit kernels, which spend one conversion, broadcast and FMA on every block.
#include "kernels/qdot.h"
#include "kernels/qdot_simd.h"

namespace seer {
namespace {

#if defined(SEER_QDOT_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VNNI__)
#define SEER_QDOT_AVX512 1
using namespace qsimd;

inline __m256i weights256(const BlockQ8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
inline __m256i weights256(const BlockQ4_0& b) { return _mm256_sub_epi8(nibbles32(b.qs), _mm256_set1_epi8(8)); }

// Blocks b and b + 1 (or b alone when `two` is false: the high half is zero).
template <class Block>
inline __m512i weights512(const Block* w, bool two) {
  const __m512i lo = _mm512_castsi256_si512(weights256(w[0]));
  return _mm512_inserti64x4(lo, two ? weights256(w[1]) : _mm256_setzero_si256(), 1);
}

template <class Block, int C>
void tile(const Block* w, int64_t nb, const QActCols& x, float* out) {
  const __m512i offset = _mm512_set1_epi8(-128);
  const __m512i pair_lanes = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  __m512 acc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; b += 2) {
    const bool two = b + 1 < nb;
    prefetch_ahead<2 * sizeof(Block)>(w + b);
    const __m512i wv = weights512(w + b, two);
    const __m512i start = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, wv));
    const float d1 = two ? fp16(w[b + 1].d) : 0.0f;
    const __m512 dw = _mm512_insertf32x8(_mm512_set1_ps(fp16(w[b].d)), _mm256_set1_ps(d1), 1);
    const __mmask64 bytes = two ? ~__mmask64{0} : __mmask64{0xffffffff};
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(bytes, x.q[c] + b * kQK), offset);
      const __m512i dot = _mm512_dpbusd_epi32(start, xv, wv);
      const __m128 dx2 = two ? _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(x.d[c] + b)))
                             : _mm_load_ss(x.d[c] + b);
      const __m512 scale = _mm512_mul_ps(dw, _mm512_permutexvar_ps(pair_lanes, _mm512_castps128_ps512(dx2)));
      acc[c] = _mm512_fmadd_ps(scale, _mm512_cvtepi32_ps(dot), acc[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = _mm512_reduce_add_ps(acc[c]);
}

template <class Block>
void tile_n(const void* w, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* b = static_cast<const Block*>(w);
  switch (nc) {
    case 4: return tile<Block, 4>(b, nb, x, out);
    case 3: return tile<Block, 3>(b, nb, x, out);
    case 2: return tile<Block, 2>(b, nb, x, out);
    default: return tile<Block, 1>(b, nb, x, out);
  }
}

// The GEMM tile (qdot.h): the weight pair of each of the R rows is prepared once per
// pair of blocks, the activations of each column loaded once for the R rows. Per row and
// column the same instructions as `tile` in the same order, so the same bits.
constexpr int kRows = 4, kCols = 4;  // measured in docs/kernels.md

template <class Block, int C>
void gemm_tile(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  constexpr int R = kRows;
  const __m512i offset = _mm512_set1_epi8(-128);
  const __m512i pair_lanes = _mm512_setr_epi32(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1);
  const Block* w[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) w[r] = static_cast<const Block*>(wp[r]);
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; b += 2) {
    const bool two = b + 1 < nb;
    __m512i wv[R], start[R];
    __m512 dw[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      wv[r] = weights512(w[r] + b, two);
      start[r] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, wv[r]));
      const float d1 = two ? fp16(w[r][b + 1].d) : 0.0f;
      dw[r] = _mm512_insertf32x8(_mm512_set1_ps(fp16(w[r][b].d)), _mm256_set1_ps(d1), 1);
    }
    const __mmask64 bytes = two ? ~__mmask64{0} : __mmask64{0xffffffff};
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(bytes, x.q + c * x.q_stride + b * kQK), offset);
      const float* xd = x.d + c * x.d_stride + b;
      const __m128 dx2 = two ? _mm_castsi128_ps(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(xd))) : _mm_load_ss(xd);
      const __m512 dxp = _mm512_permutexvar_ps(pair_lanes, _mm512_castps128_ps512(dx2));
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        const __m512i dot = _mm512_dpbusd_epi32(start[r], xv, wv[r]);
        acc[r][c] = _mm512_fmadd_ps(_mm512_mul_ps(dw[r], dxp), _mm512_cvtepi32_ps(dot), acc[r][c]);
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) out[r * kQGemmMaxC + c] = _mm512_reduce_add_ps(acc[r][c]);
}

template <class Block, int C = kCols>
void gemm_n(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out) {
  if constexpr (C > 1)
    if (nc < C) return gemm_n<Block, C - 1>(w, nb, x, nc, out);
  gemm_tile<Block, C>(w, nb, x, out);
}
static_assert(kRows <= kQGemmMaxR && kCols <= kQGemmMaxC);

template <class Block>
constexpr QDotKernel kKernel{&tile_n<Block>, ActKind::Q8, kQK, sizeof(Block), &gemm_n<Block>, kRows, kCols};
#endif

}  // namespace

const QDotKernel* qdot_kernel_avx512(GgmlType t) {
#ifdef SEER_QDOT_AVX512
  if (t == GgmlType::Q8_0) return &kKernel<BlockQ8_0>;
  if (t == GgmlType::Q4_0) return &kKernel<BlockQ4_0>;
#endif
  (void)t;
  return nullptr;
}

}  // namespace seer
