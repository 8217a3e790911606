// 512-bit VNNI kernels of the 32-element types whose block is a scale and signed values:
// Q8_0, Q4_0, Q5_0 and IQ4_NL (qdot.h). One summation order serves the two tiles:
// per (row, column) and k chunk, the exact integer dot of each 32-element block, then
// acc = fma(d_w * d_x, float(dot), acc) block after block. That order lets the GEMM
// tile put one weight row in each of the 16 lanes of a vector, so a dpbusd does
// 16 rows x 4 elements for one column and a block costs one conversion, one scale
// product and one FMA per 16 rows (the row-at-a-time form spends those per row, and
// ran Q8_0 prefill at ~27 GMAC/s where this runs ~55-70; docs/kernels-prefill.md, "Sixteen
// rows in the lanes"). Decode goes through the GEMM tile too; the tile kernel (the rows
// past the last 16) streams one row and keeps the order by reducing 16 blocks' lanes
// into one vector of block dots and adding them up in sequence.
//
// Integer dots: the GEMM tile has the weights as u8 (w + 128) against the signed
// activations, started from -128 * sum(x) (the column's packed copy holds it); the
// tile kernel has (x + 128) as u8 against the signed weights, started from
// -128 * sum(w). Both are exact in int32, so both give the same dot.
#include <algorithm>
#include <cmath>

#include "kernels/rows16.h"

namespace seer {
namespace {

#ifdef SEER_QDOT_AVX512
using namespace qsimd;
using rows16::kCols;
using rows16::kRows;
using rows16::PackedBlock;
using rows16::scales16;
using rows16::weights256;

// Blocks b and b + 1 (or b alone when `two` is false: the high half is zero).
template <class Block>
inline __m512i weights512(const Block* w, bool two) {
  const __m512i lo = _mm512_castsi256_si512(weights256(w[0]));
  return _mm512_inserti64x4(lo, two ? weights256(w[1]) : _mm256_setzero_si256(), 1);
}

inline __m512i lane_offsets(int64_t stride) {
  return _mm512_mullo_epi32(_mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15),
                            _mm512_set1_epi32(static_cast<int32_t>(stride)));
}

// ---- The tile kernel: one row, 16 blocks at a time ----

// Index vectors of the reduction below: stage s pairs two vectors whose lanes hold
// 8 >> s partial sums of each of 2 << s blocks and adds the even to the odd partials.
struct ReduceIndex {
  __m512i even[3], odd[3];
  ReduceIndex() {
    for (int s = 0; s < 3; ++s) {
      alignas(64) int32_t e[16];
      const int parts = 4 >> s;  // partial sums per block after this stage
      const int blocks = 16 / parts;
      for (int lane = 0; lane < 16; ++lane) {
        const int q = lane / parts, t = lane % parts;          // output block, output part
        const int per_src = blocks / 2;                         // blocks each source vector holds
        e[lane] = 16 * (q / per_src) + (q % per_src) * (2 * parts) + 2 * t;
      }
      even[s] = _mm512_load_si512(e);
      odd[s] = _mm512_add_epi32(even[s], _mm512_set1_epi32(1));
    }
  }
};

// v[i] holds 8 lane sums of block 2i (lanes 0-7) and of block 2i + 1 (lanes 8-15);
// returns the 16 block sums, block j in lane j.
inline __m512i block_sums16(const ReduceIndex& ix, __m512i v[8]) {
#pragma GCC unroll 3
  for (int s = 0, n = 8; s < 3; ++s, n /= 2)
#pragma GCC unroll 4
    for (int i = 0; i < n / 2; ++i)
      v[i] = _mm512_add_epi32(_mm512_permutex2var_epi32(v[2 * i], ix.even[s], v[2 * i + 1]),
                              _mm512_permutex2var_epi32(v[2 * i], ix.odd[s], v[2 * i + 1]));
  return v[0];
}

template <class Block, int C>
void tile(const Block* w, int64_t nb, const QActCols& x, float* out) {
  static const ReduceIndex ix;
  const __m512i offset = _mm512_set1_epi8(-128);
  const __m512i block_bytes = lane_offsets(sizeof(Block));
  float acc[C] = {};
  for (int64_t b = 0; b < nb; b += 16) {
    const int blocks = static_cast<int>(std::min<int64_t>(16, nb - b));
    __m512i wv[8], start[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const int first = 2 * i;
      prefetch_ahead<2 * sizeof(Block)>(w + b + first);
      wv[i] = first < blocks ? weights512(w + b + first, first + 1 < blocks) : _mm512_setzero_si512();
      start[i] = _mm512_sub_epi32(_mm512_setzero_si512(), _mm512_dpbusd_epi32(_mm512_setzero_si512(), offset, wv[i]));
    }
    const __mmask16 valid = static_cast<__mmask16>((1u << blocks) - 1);
    const __m512 dw = scales16(&w[b].d, block_bytes, valid);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      __m512i dots[8];
#pragma GCC unroll 8
      for (int i = 0; i < 8; ++i) {
        const int have = std::clamp(blocks - 2 * i, 0, 2);
        const __mmask64 bytes = have == 2 ? ~__mmask64{0} : have == 1 ? __mmask64{0xffffffff} : 0;
        const __m512i xv = _mm512_xor_si512(_mm512_maskz_loadu_epi8(bytes, x.q[c] + (b + 2 * i) * kQK), offset);
        dots[i] = _mm512_dpbusd_epi32(start[i], xv, wv[i]);
      }
      alignas(64) float scale[16], dot[16];
      _mm512_store_ps(dot, _mm512_cvtepi32_ps(block_sums16(ix, dots)));
      _mm512_store_ps(scale, _mm512_mul_ps(dw, _mm512_maskz_loadu_ps(valid, x.d[c] + b)));
      float a = acc[c];
      for (int j = 0; j < blocks; ++j) a = std::fma(scale[j], dot[j], a);
      acc[c] = a;
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = acc[c];
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

// ---- The GEMM tile: 16 rows in the lanes, kCols columns ----

// Decode too goes through the GEMM tile: at one column it streamed 4096 x 4096 Q8_0 as
// fast as the tile kernel (bench_qdot 10.8-12.5 vs 11.2-12.0 GMAC/s), which is left
// with the rows past the last 16.
constexpr int kGemmMinCols = 1;

// Packs the columns as rows16::PackedBlock lays them out (docs/kernels-prefill.md, "Sixteen rows
// in the lanes"): reading them through 16 column strides spilled the row pointers.
void pack_cols(const QGemmCols& x, int64_t nb, int nc, uint8_t* out) {
  auto* p = reinterpret_cast<PackedBlock*>(out);
  for (int64_t b = 0; b < nb; ++b, ++p)
    for (int c = 0; c < nc; ++c) {
      const int8_t* q = x.q + c * x.q_stride + b * kQK;
      const __m256i v = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(p->q[c]), v);
      // sum(q) = sum(q + 128) - 32 * 128, the unsigned sum by psadbw.
      const __m256i sad = _mm256_sad_epu8(_mm256_xor_si256(v, _mm256_set1_epi8(-128)), _mm256_setzero_si256());
      const __m128i s2 = _mm_add_epi64(_mm256_castsi256_si128(sad), _mm256_extracti128_si256(sad, 1));
      const int32_t sum = static_cast<int32_t>(_mm_cvtsi128_si64(_mm_add_epi64(s2, _mm_unpackhi_epi64(s2, s2)))) - 32 * 128;
      p->d[c] = x.d[c * x.d_stride + b];
      p->start[c] = -128 * sum;
    }
}

// 16 rows x 8 dwords, row i in the low half of v[i] and row i + 8 in the high half ->
// v[j] holds dword j of the 16 rows, row r in lane r. Stage s swaps bit s of the
// vector index with bit s of the lane index.
struct TransposeIndex {
  __m512i lo[3], hi[3];
  TransposeIndex() {
    for (int s = 0; s < 3; ++s) {
      alignas(64) int32_t a[16], b[16];
      for (int lane = 0; lane < 16; ++lane) {
        const bool bit = (lane >> s) & 1;
        a[lane] = bit ? 16 + (lane & ~(1 << s)) : lane;
        b[lane] = bit ? 16 + lane : (lane | (1 << s));
      }
      lo[s] = _mm512_load_si512(a);
      hi[s] = _mm512_load_si512(b);
    }
  }
};

inline void transpose16x8(const TransposeIndex& ix, __m512i v[8]) {
#pragma GCC unroll 3
  for (int s = 0; s < 3; ++s)
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
      if (!(i & (1 << s))) {
        const __m512i a = v[i], b = v[i | (1 << s)];
        v[i] = _mm512_permutex2var_epi32(a, ix.lo[s], b);
        v[i | (1 << s)] = _mm512_permutex2var_epi32(a, ix.hi[s], b);
      }
}

template <class Block, int C>
void gemm_tile(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  static const TransposeIndex ix;
  const Block* w[kRows];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) w[r] = static_cast<const Block*>(wp[r]);
  const __m512i row_offsets = rows16::row_offsets(wp);
  const __m512i flip = _mm512_set1_epi8(-128);
  __m512 acc[C];
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) acc[c] = _mm512_setzero_ps();
  const auto* p = reinterpret_cast<const PackedBlock*>(x.packed);
  const char* ahead = rows16::next_tile(wp);
  for (int64_t b = 0; b < nb; ++b, ++p, ahead += kRows * sizeof(Block)) {
    rows16::prefetch_next_tile<Block>(ahead);
    __m512i v[8];
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i)
      v[i] = _mm512_xor_si512(_mm512_inserti64x4(_mm512_castsi256_si512(weights256(w[i][b])), weights256(w[i + 8][b]), 1),
                              flip);
    transpose16x8(ix, v);
    const __m512 dw = scales16(&w[0][b].d, row_offsets, 0xffff);
#pragma GCC unroll 16
    for (int c = 0; c < C; ++c) {
      // Few columns leave the out-of-order core little else to do than this chain of
      // dpbusd (5 cycles each), so they run it as two.
      constexpr int kChains = C <= 4 ? 2 : 1;
      __m512i part[kChains];
      part[0] = _mm512_set1_epi32(p->start[c]);
#pragma GCC unroll 4
      for (int j = 1; j < kChains; ++j) part[j] = _mm512_setzero_si512();
#pragma GCC unroll 8
      for (int j = 0; j < 8; ++j)
        part[j % kChains] = _mm512_dpbusd_epi32(part[j % kChains], v[j], _mm512_set1_epi32(p->q[c][j]));
      __m512i dot = part[0];
#pragma GCC unroll 4
      for (int j = 1; j < kChains; ++j) dot = _mm512_add_epi32(dot, part[j]);
      acc[c] = _mm512_fmadd_ps(_mm512_mul_ps(dw, _mm512_set1_ps(p->d[c])), _mm512_cvtepi32_ps(dot), acc[c]);
    }
  }
  alignas(64) float lanes[kRows];
#pragma GCC unroll 16
  for (int c = 0; c < C; ++c) {
    _mm512_store_ps(lanes, acc[c]);
    for (int r = 0; r < kRows; ++r) out[r * kQGemmMaxC + c] = lanes[r];
  }
}

template <class Block, int C = kCols>
void gemm_n(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out) {
  if constexpr (C > 1)
    if (nc < C) return gemm_n<Block, C - 1>(w, nb, x, nc, out);
  gemm_tile<Block, C>(w, nb, x, out);
}
static_assert(kRows <= kQGemmMaxR && kQGemmMaxC % kCols == 0);

template <class Block>
constexpr QDotKernel kKernel{&tile_n<Block>, ActKind::Q8, kQK, sizeof(Block), &gemm_n<Block>, kRows, kCols,
                             &pack_cols, sizeof(PackedBlock), kGemmMinCols};
#endif

}  // namespace

const QDotKernel* qdot_kernel_avx512(GgmlType t) {
#ifdef SEER_QDOT_AVX512
  if (t == GgmlType::Q8_0) return &kKernel<BlockQ8_0>;
  if (t == GgmlType::Q4_0) return &kKernel<BlockQ4_0>;
  if (t == GgmlType::Q5_0) return &kKernel<BlockQ5_0>;
  if (t == GgmlType::IQ4_NL) return &kKernel<BlockIQ4_NL>;
#endif
  (void)t;
  return nullptr;
}

}  // namespace seer
