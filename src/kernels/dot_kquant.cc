// SIMD dot kernels of the 256-element super-block types Q2_K, Q3_K, Q4_K, Q5_K, Q6_K
// and IQ4_XS against Q8_K activations (qdot.h). Per super-block and weight row the
// packed scales are unpacked once (int16 per 16 elements); then per group of 32
// elements the quants are decoded into one vector and, for every column,
//   iacc += scale16 * maddubs(u, x)       (madd, or dpwssd with VNNI)
// so the super-block's integer sum sum_j sc_j * (u . x)_j is exact in int32. Offsets
// of the quants (Q3_K: -4, Q6_K: -32) are folded in as integers through the
// activation sums of 16 (bsums); the minimums of Q2_K/Q4_K/Q5_K (scaled by dmin) go
// through the same sums in f32. IQ4_XS values are signed: |w| . sign(x, w).
#include <algorithm>
#include <cstring>

#include "kernels/qdot.h"
#include "kernels/qdot_simd.h"

namespace seer {
namespace {

#ifdef SEER_QDOT_AVX2
using namespace qsimd;

// A super-block prepared for the dot products with every column.
struct Prepared {
  // Integer scales per 16 elements, even sub-blocks (0, 2, .., 14) in the low lane and
  // odd ones in the high lane, so group g's scale vector (sub-block 2g in the low
  // lane, 2g + 1 in the high one, as the 32 quants of a group lie) is one pshufb.
  __m256i scales;
  __m256i bias16;              // integer offset per 16 elements (kIntBias), times the bsums
  __m256i mins16;              // minimum per 16 elements (kMins), times -dmin and the bsums
  float d = 0, dmin = 0;
};

inline __m256i shift_right_16(__m256i v, int n) { return _mm256_srl_epi16(v, _mm_cvtsi32_si128(n)); }
inline __m256i low_bits(__m256i v, int n, int mask) {
  return _mm256_and_si256(shift_right_16(v, n), _mm256_set1_epi8(static_cast<char>(mask)));
}
inline __m256i load32(const void* p) { return _mm256_loadu_si256(static_cast<const __m256i*>(p)); }

// Sixteen int8 scales (one per 16 elements) into Prepared::scales' even/odd layout.
inline __m256i split_even_odd(__m128i s8) {
  const __m128i deinterleave = _mm_setr_epi8(0, 2, 4, 6, 8, 10, 12, 14, 1, 3, 5, 7, 9, 11, 13, 15);
  return _mm256_cvtepi8_epi16(_mm_shuffle_epi8(s8, deinterleave));
}
// Group g's scales: int16 lane g of each 128-bit half, broadcast over the half.
inline __m256i group_scale(__m256i scales, int g) {
  const __m256i idx = _mm256_set1_epi16(static_cast<short>((2 * g) | ((2 * g + 1) << 8)));
  return _mm256_shuffle_epi8(scales, idx);
}

struct Q2K {
  using Block = BlockQ2_K;
  static constexpr bool kSigned = false, kIntBias = false, kMins = true;
  static void prepare(const Block& b, Prepared& p) {
    const __m128i s = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    p.scales = split_even_odd(_mm_and_si128(s, _mm_set1_epi8(0x0f)));
    p.mins16 = _mm256_cvtepu8_epi16(_mm_and_si128(_mm_srli_epi16(s, 4), _mm_set1_epi8(0x0f)));
    p.d = fp16(b.d);
    p.dmin = fp16(b.dmin);
  }
  static __m256i quants(const Block& b, int g) { return low_bits(load32(b.qs + 32 * (g / 4)), 2 * (g % 4), 3); }
};

struct Q3K {
  using Block = BlockQ3_K;
  static constexpr bool kSigned = false, kIntBias = true, kMins = false;
  static void prepare(const Block& b, Prepared& p) {
    // The layout q3_k_scale (model/quant.h) reads, with word operations: word i holds sub-blocks 4i..4i+3.
    uint32_t w[3];
    std::memcpy(w, b.scales, sizeof(w));
    const uint32_t lo4 = 0x0f0f0f0f, hi2 = 0x03030303;
    const __m128i low = _mm_setr_epi32(static_cast<int>(w[0] & lo4), static_cast<int>(w[1] & lo4),
                                       static_cast<int>((w[0] >> 4) & lo4), static_cast<int>((w[1] >> 4) & lo4));
    const __m128i high = _mm_setr_epi32(static_cast<int>(w[2] & hi2), static_cast<int>((w[2] >> 2) & hi2),
                                        static_cast<int>((w[2] >> 4) & hi2), static_cast<int>((w[2] >> 6) & hi2));
    const __m128i sv = _mm_sub_epi8(_mm_or_si128(low, _mm_slli_epi16(high, 4)), _mm_set1_epi8(32));
    p.scales = split_even_odd(sv);
    p.bias16 = _mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepi8_epi16(sv)), 2);  // -4 * sc
    p.d = fp16(b.d);
  }
  static __m256i quants(const Block& b, int g) {
    const __m256i low = low_bits(load32(b.qs + 32 * (g / 4)), 2 * (g % 4), 3);
    const __m256i high = _mm256_slli_epi16(low_bits(load32(b.hmask), g, 1), 2);
    return _mm256_or_si256(low, high);
  }
};

// Q4_K / Q5_K scales and minimums (the layout k_scale_min in model/quant.h reads) unpacked with word
// operations: bytes 0-3 of the results are sub-blocks 0-3, bytes 4-7 sub-blocks 4-7.
template <class B>
inline void prepare_k4(const B& b, Prepared& p) {
  uint32_t w[3];
  std::memcpy(w, b.scales, sizeof(w));
  const uint32_t sc_lo = w[0] & 0x3f3f3f3f, mn_lo = w[1] & 0x3f3f3f3f;
  const uint32_t sc_hi = (w[2] & 0x0f0f0f0f) | ((w[0] >> 2) & 0x30303030);
  const uint32_t mn_hi = ((w[2] >> 4) & 0x0f0f0f0f) | ((w[1] >> 2) & 0x30303030);
  const __m128i sc = _mm_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(sc_lo), static_cast<int>(sc_hi), 0, 0));
  const __m128i mn = _mm_cvtepu8_epi16(_mm_setr_epi32(static_cast<int>(mn_lo), static_cast<int>(mn_hi), 0, 0));
  p.scales = _mm256_set_m128i(sc, sc);  // one scale per 32: the same in both halves
  p.mins16 = _mm256_set_m128i(_mm_unpackhi_epi16(mn, mn), _mm_unpacklo_epi16(mn, mn));
  p.d = fp16(b.d);
  p.dmin = fp16(b.dmin);
}

struct Q4K {
  using Block = BlockQ4_K;
  static constexpr bool kSigned = false, kIntBias = false, kMins = true;
  static void prepare(const Block& b, Prepared& p) { prepare_k4(b, p); }
  static __m256i quants(const Block& b, int g) { return low_bits(load32(b.qs + 32 * (g / 2)), 4 * (g % 2), 0x0f); }
};

struct Q5K {
  using Block = BlockQ5_K;
  static constexpr bool kSigned = false, kIntBias = false, kMins = true;
  static void prepare(const Block& b, Prepared& p) { prepare_k4(b, p); }
  static __m256i quants(const Block& b, int g) {
    const __m256i low = low_bits(load32(b.qs + 32 * (g / 2)), 4 * (g % 2), 0x0f);
    return _mm256_or_si256(low, _mm256_slli_epi16(low_bits(load32(b.qh), g, 1), 4));
  }
};

struct Q6K {
  using Block = BlockQ6_K;
  static constexpr bool kSigned = false, kIntBias = true, kMins = false;
  static void prepare(const Block& b, Prepared& p) {
    const __m128i sv = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.scales));
    p.scales = split_even_odd(sv);
    p.bias16 = _mm256_slli_epi16(_mm256_sub_epi16(_mm256_setzero_si256(), _mm256_cvtepi8_epi16(sv)), 5);  // -32 * sc
    p.d = fp16(b.d);
  }
  static __m256i quants(const Block& b, int g) {
    const int half = g / 4, j = g % 4;
    const __m256i low = low_bits(load32(b.ql + 64 * half + 32 * (j % 2)), 4 * (j / 2), 0x0f);
    const __m256i high = low_bits(load32(b.qh + 32 * half), 2 * j, 3);
    return _mm256_or_si256(low, _mm256_slli_epi16(high, 4));
  }
};

struct IQ4XS {
  using Block = BlockIQ4_XS;
  static constexpr bool kSigned = true, kIntBias = false, kMins = false;
  static void prepare(const Block& b, Prepared& p) {
    // The layout iq4_xs_scale (model/quant.h) reads: low nibbles two per byte, high bit pairs in a word.
    uint32_t l;
    std::memcpy(&l, b.scales_l, 4);
    const __m128i lv = _mm_cvtsi32_si128(static_cast<int>(l));
    const __m128i low = _mm_unpacklo_epi8(_mm_and_si128(lv, _mm_set1_epi8(0x0f)),
                                          _mm_and_si128(_mm_srli_epi16(lv, 4), _mm_set1_epi8(0x0f)));
    const __m256i h32 = _mm256_and_si256(
        _mm256_srlv_epi32(_mm256_set1_epi32(b.scales_h), _mm256_setr_epi32(0, 2, 4, 6, 8, 10, 12, 14)),
        _mm256_set1_epi32(3));
    const __m128i high = _mm_packs_epi32(_mm256_castsi256_si128(h32), _mm256_extracti128_si256(h32, 1));
    const __m128i s =
        _mm_sub_epi16(_mm_or_si128(_mm_cvtepu8_epi16(low), _mm_slli_epi16(high, 4)), _mm_set1_epi16(32));
    p.scales = _mm256_set_m128i(s, s);
    p.d = fp16(b.d);
  }
  static __m256i quants(const Block& b, int g) { return _mm256_shuffle_epi8(iq4nl_table(), nibbles32(b.qs + 16 * g)); }
};

template <class P, bool V, int C>
void tile(const typename P::Block* w, int64_t nb, const QActCols& x, float* out) {
  __m256 acc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<sizeof(typename P::Block)>(w + b);
    const auto& blk = w[b];
    Prepared p;
    P::prepare(blk, p);
    // Even and odd groups in separate accumulators: two dependency chains of dpwssd
    // instead of one (the sum is exact in int32, so the same result).
    __m256i iacc[C], iacc_odd[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) iacc[c] = iacc_odd[c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      const __m256i q = P::quants(blk, g);
      const __m256i scale = group_scale(p.scales, g);
      const __m256i u = P::kSigned ? _mm256_sign_epi8(q, q) : q;
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        __m256i xv = load32(x.k[c][b].qs + 32 * g);
        if constexpr (P::kSigned) xv = _mm256_sign_epi8(xv, q);
        __m256i& a = g % 2 ? iacc_odd[c] : iacc[c];
        a = dot_u8s8_scaled<V>(a, u, xv, scale);
      }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) iacc[c] = _mm256_add_epi32(iacc[c], iacc_odd[c]);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const BlockQ8_K& a = x.k[c][b];
      const __m256i bsums = load32(a.bsums);
      if constexpr (P::kIntBias) iacc[c] = dot_s16<V>(iacc[c], bsums, p.bias16);
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(p.d * a.d), _mm256_cvtepi32_ps(iacc[c]), acc[c]);
      if constexpr (P::kMins) {
        const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(bsums, p.mins16));
        acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(-p.dmin * a.d), mins, acc[c]);
      }
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = simd::hsum(acc[c]);
}

template <class P, bool V>
void tile_n(const void* w, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* b = static_cast<const typename P::Block*>(w);
  switch (nc) {
    case 4: return tile<P, V, 4>(b, nb, x, out);
    case 3: return tile<P, V, 3>(b, nb, x, out);
    case 2: return tile<P, V, 2>(b, nb, x, out);
    default: return tile<P, V, 1>(b, nb, x, out);
  }
}

// The GEMM tile (qdot.h): each row's super-block is prepared and each group decoded
// once for C columns, each column's group of activations loaded once for R rows. Per
// row and column the integer sums are those of `tile` (exact) and the f32 steps the
// same instructions in the same order, so the same bits.
constexpr int kRows256 = 4, kCols256 = 4;

template <class P, bool V, int C>
void gemm_tile(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  constexpr int R = kRows256;
  using Block = typename P::Block;
  const Block* w[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) w[r] = static_cast<const Block*>(wp[r]);
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    Prepared p[R];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      prefetch_ahead<sizeof(typename P::Block)>(w[r] + b);
      P::prepare(w[r][b], p[r]);
    }
    __m256i iacc[R][C];
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) iacc[r][c] = _mm256_setzero_si256();
#pragma GCC unroll 8
    for (int g = 0; g < 8; ++g) {
      __m256i q[R], u[R], scale[R];
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        q[r] = P::quants(w[r][b], g);
        scale[r] = group_scale(p[r].scales, g);
        u[r] = P::kSigned ? _mm256_sign_epi8(q[r], q[r]) : q[r];
      }
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) {
        const __m256i xv = load32(x.k[c * x.k_stride + b].qs + 32 * g);
#pragma GCC unroll 4
        for (int r = 0; r < R; ++r) {
          const __m256i xs = P::kSigned ? _mm256_sign_epi8(xv, q[r]) : xv;
          iacc[r][c] = dot_u8s8_scaled<V>(iacc[r][c], u[r], xs, scale[r]);
        }
      }
    }
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const BlockQ8_K& a = x.k[c * x.k_stride + b];
      const __m256i bsums = load32(a.bsums);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r) {
        if constexpr (P::kIntBias) iacc[r][c] = dot_s16<V>(iacc[r][c], bsums, p[r].bias16);
        acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(p[r].d * a.d), _mm256_cvtepi32_ps(iacc[r][c]), acc[r][c]);
        if constexpr (P::kMins) {
          const __m256 mins = _mm256_cvtepi32_ps(_mm256_madd_epi16(bsums, p[r].mins16));
          acc[r][c] = _mm256_fmadd_ps(_mm256_set1_ps(-p[r].dmin * a.d), mins, acc[r][c]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) out[r * kQGemmMaxC + c] = simd::hsum(acc[r][c]);
}

template <class P, bool V>
void gemm_n(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out) {
  switch (nc) {
    case 4: return gemm_tile<P, V, 4>(w, nb, x, out);
    case 3: return gemm_tile<P, V, 3>(w, nb, x, out);
    case 2: return gemm_tile<P, V, 2>(w, nb, x, out);
    default: return gemm_tile<P, V, 1>(w, nb, x, out);
  }
}
static_assert(kCols256 == 4, "gemm_n instantiates 1..4 columns");

#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512VNNI__) && defined(SEER_QDOT_VNNI)
#define SEER_KQUANT_GEMM512 1
// 512-bit GEMM tiles for the unsigned-quant types (AVX-512 has no byte sign): groups
// g and g + 1 side by side in one zmm, so one maddubs + dpwssd serves 64 weights. At
// the end of a super-block the two halves of each integer accumulator are added
// (exact), which gives the lanes the 256-bit kernels accumulate, and from there the
// same f32 steps: the bits of the VNNI tile kernel.
inline __m512i load64(const void* p) { return _mm512_loadu_si512(p); }
inline __m512i pair(__m256i lo, __m256i hi) { return _mm512_inserti64x4(_mm512_castsi256_si512(lo), hi, 1); }
inline __m512i shift_right_16(__m512i v, int lo, int hi) {
  return _mm512_srlv_epi16(v, pair(_mm256_set1_epi16(static_cast<short>(lo)), _mm256_set1_epi16(static_cast<short>(hi))));
}

// Groups g and g + 1 (g even) of a super-block, decoded.
template <class P>
inline __m512i quants_pair(const typename P::Block& b, int g) {
  return pair(P::quants(b, g), P::quants(b, g + 1));
}
template <>
inline __m512i quants_pair<Q4K>(const BlockQ4_K& b, int g) {  // the low and the high nibbles of 32 bytes
  const __m512i v = _mm512_broadcast_i64x4(load32(b.qs + 32 * (g / 2)));
  return _mm512_and_si512(shift_right_16(v, 0, 4), _mm512_set1_epi8(0x0f));
}
template <>
inline __m512i quants_pair<Q6K>(const BlockQ6_K& b, int g) {
  const int half = g / 4, j = g % 4;  // j is 0 or 2: ql bytes 64 * half + 0..63, one shift
  const __m512i low = _mm512_and_si512(_mm512_srli_epi16(load64(b.ql + 64 * half), 4 * (j / 2)), _mm512_set1_epi8(0x0f));
  const __m512i qh = _mm512_broadcast_i64x4(load32(b.qh + 32 * half));
  const __m512i high = _mm512_and_si512(shift_right_16(qh, 2 * j, 2 * j + 2), _mm512_set1_epi8(3));
  return _mm512_or_si512(low, _mm512_slli_epi16(high, 4));
}

inline __m512 pair_ps(__m256 lo, __m256 hi) { return _mm512_insertf32x8(_mm512_castps256_ps512(lo), hi, 1); }

constexpr int kRows512 = 4, kCols512 = 4;  // the register tile, measured in docs/kernels-prefill.md
constexpr int kPairs512 = kQGemmMaxC / 2;  // column pairs of one call
static_assert(kRows512 <= kQGemmMaxR && kQGemmMaxC % kCols512 == 0);

// One super-block of R weight rows, decoded once for all the columns of a call (the
// register tile reloads it from L1 for every 4 columns instead of decoding it again).
template <class P, int R>
struct Decoded512 {
  __m512i u[4][R], scale[4][R];  // group pair g / 2, row
  Prepared p[R];
};

template <class P, int R>
inline void decode512(const typename P::Block* const* w, int64_t b, Decoded512<P, R>& d) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    prefetch_ahead<sizeof(typename P::Block)>(w[r] + b);
    P::prepare(w[r][b], d.p[r]);
    const __m512i scales = _mm512_broadcast_i64x4(d.p[r].scales);
#pragma GCC unroll 4
    for (int g = 0; g < 8; g += 2) {
      const __m512i idx = pair(_mm256_set1_epi16(static_cast<short>((2 * g) | ((2 * g + 1) << 8))),
                               _mm256_set1_epi16(static_cast<short>((2 * g + 2) | ((2 * g + 3) << 8))));
      d.u[g / 2][r] = quants_pair<P>(w[r][b], g);
      d.scale[g / 2][r] = _mm512_shuffle_epi8(scales, idx);
    }
  }
}

// Columns c0 .. c0 + C - 1 of super-block b against the decoded rows, added to the
// f32 accumulators of columns 2i and 2i + 1 side by side in acc[r][i] (the high half
// unused for a last odd column): lane for lane the steps of the 256-bit tile.
template <class P, int R, int C, int Pairs>
inline void columns512(const Decoded512<P, R>& w, const QGemmCols& x, int c0, int64_t b, __m512 (*acc)[Pairs]) {
  constexpr int C2 = (C + 1) / 2;
  __m512i iacc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) iacc[r][c] = _mm512_setzero_si512();
#pragma GCC unroll 4
  for (int g2 = 0; g2 < 4; ++g2) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m512i xv = load64(x.k[(c0 + c) * x.k_stride + b].qs + 64 * g2);
#pragma GCC unroll 4
      for (int r = 0; r < R; ++r)
        iacc[r][c] = _mm512_dpwssd_epi32(iacc[r][c], _mm512_maddubs_epi16(w.u[g2][r], xv), w.scale[g2][r]);
    }
  }
  // Per column pair: the two halves of each integer accumulator added (the 256-bit
  // lanes), the bias, then d * d_x and -dmin * d_x as vector products of the same
  // factors the 256-bit tile multiplies in scalar (the same f32 values).
#pragma GCC unroll 4
  for (int c2 = 0; c2 < C2; ++c2) {
    const int i0 = 2 * c2, i1 = i0 + 1 < C ? i0 + 1 : i0;
    const BlockQ8_K& a0 = x.k[(c0 + i0) * x.k_stride + b];
    const BlockQ8_K& a1 = x.k[(c0 + i1) * x.k_stride + b];
    const __m512 dx = pair_ps(_mm256_set1_ps(a0.d), _mm256_set1_ps(a1.d));
    const __m512i bsums = pair(load32(a0.bsums), load32(a1.bsums));
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) {
      const Prepared& p = w.p[r];
      const __m512i lo = _mm512_shuffle_i64x2(iacc[r][i0], iacc[r][i1], 0x44);
      const __m512i hi = _mm512_shuffle_i64x2(iacc[r][i0], iacc[r][i1], 0xee);
      __m512i sum = _mm512_add_epi32(lo, hi);
      if constexpr (P::kIntBias) sum = _mm512_dpwssd_epi32(sum, bsums, _mm512_broadcast_i64x4(p.bias16));
      __m512& a = acc[r][c0 / 2 + c2];
      a = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(p.d), dx), _mm512_cvtepi32_ps(sum), a);
      if constexpr (P::kMins) {
        const __m512 mins = _mm512_cvtepi32_ps(_mm512_madd_epi16(bsums, _mm512_broadcast_i64x4(p.mins16)));
        a = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(-p.dmin), dx), mins, a);
      }
    }
  }
}

template <int R, int Pairs>
inline void write_out(const __m512 (*acc)[Pairs], int nc, float* out) {
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < nc; ++c) {
      const __m512 a = acc[r][c / 2];
      out[r * kQGemmMaxC + c] = simd::hsum(c % 2 ? _mm512_extractf32x8_ps(a, 1) : _mm512_castps512_ps256(a));
    }
}

template <class P, int R>
void rows512(const void* const* wp, const typename P::Block** w) {
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) w[r] = static_cast<const typename P::Block*>(wp[r]);
}

// Up to one register tile of columns: the decoded rows stay in registers.
template <class P, int R, int C>
void gemm_tile512(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  const typename P::Block* w[R];
  rows512<P, R>(wp, w);
  constexpr int Pairs = (C + 1) / 2;
  __m512 acc[R][Pairs];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r)
#pragma GCC unroll 4
    for (int i = 0; i < Pairs; ++i) acc[r][i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    Decoded512<P, R> d;
    decode512<P, R>(w, b, d);
    columns512<P, R, C, Pairs>(d, x, 0, b, acc);
  }
  write_out<R, Pairs>(acc, C, out);
}

template <class P, int R>
void gemm_tiles512(const void* const* wp, int64_t nb, const QGemmCols& x, int nc, float* out) {
  switch (nc) {
    case 1: return gemm_tile512<P, R, 1>(wp, nb, x, out);
    case 2: return gemm_tile512<P, R, 2>(wp, nb, x, out);
    case 3: return gemm_tile512<P, R, 3>(wp, nb, x, out);
    default: return gemm_tile512<P, R, 4>(wp, nb, x, out);
  }
}

// The GEMM entry: R rows x up to kQGemmMaxC columns. Beyond one register tile, each
// super-block's rows are decoded once into L1 and the register tiles of 4 columns
// reload them (bench_qdot: decoding them again for every tile cost a fifth of the
// time at n = 64).
template <class P, int R>
void gemm_block512(const void* const* wp, int64_t nb, const QGemmCols& x, int nc, float* out) {
  static_assert(!P::kSigned, "AVX-512 has no byte sign: signed quants take the 256-bit tile");
  if (nc <= 2 * kCols512) {  // decoding twice in registers is as fast as once through L1 (batch 8 decode)
    gemm_tiles512<P, R>(wp, nb, x, std::min(nc, kCols512), out);
    if (nc > kCols512) {
      QGemmCols rest = x;
      rest.k += kCols512 * x.k_stride;
      gemm_tiles512<P, R>(wp, nb, rest, nc - kCols512, out + kCols512);
    }
    return;
  }
  const typename P::Block* w[R];
  rows512<P, R>(wp, w);
  const int pairs = (nc + 1) / 2;
  __m512 acc[R][kPairs512];
  for (int r = 0; r < R; ++r)
    for (int i = 0; i < pairs; ++i) acc[r][i] = _mm512_setzero_ps();
  Decoded512<P, R> d;
  for (int64_t b = 0; b < nb; ++b) {
    decode512<P, R>(w, b, d);
    int c0 = 0;
    for (; c0 + kCols512 <= nc; c0 += kCols512) columns512<P, R, kCols512, kPairs512>(d, x, c0, b, acc);
    switch (nc - c0) {
      case 3: columns512<P, R, 3, kPairs512>(d, x, c0, b, acc); break;
      case 2: columns512<P, R, 2, kPairs512>(d, x, c0, b, acc); break;
      case 1: columns512<P, R, 1, kPairs512>(d, x, c0, b, acc); break;
      default: break;
    }
  }
  write_out<R, kPairs512>(acc, nc, out);
}
#endif

// The GEMM tile an entry gets: the 512-bit one where compiled (VNNI entries of the
// unsigned types), else the 256-bit one of the entry's own instruction set.
template <class P, bool V>
constexpr QDotKernel kernel_entry() {
#ifdef SEER_KQUANT_GEMM512
  if constexpr (V && !P::kSigned)
    return {&tile_n<P, V>, ActKind::Q8K, kQK_K, sizeof(typename P::Block), &gemm_block512<P, kRows512>, kRows512,
            kQGemmMaxC};
#endif
  return {&tile_n<P, V>, ActKind::Q8K, kQK_K, sizeof(typename P::Block), &gemm_n<P, V>, kRows256, kCols256};
}

template <class P, bool V>
constexpr QDotKernel kKernel = kernel_entry<P, V>();

template <bool V>
const QDotKernel* table(GgmlType t) {
  switch (t) {
    case GgmlType::Q2_K: return &kKernel<Q2K, V>;
    case GgmlType::Q3_K: return &kKernel<Q3K, V>;
    case GgmlType::Q4_K: return &kKernel<Q4K, V>;
    case GgmlType::Q5_K: return &kKernel<Q5K, V>;
    case GgmlType::Q6_K: return &kKernel<Q6K, V>;
    case GgmlType::IQ4_XS: return &kKernel<IQ4XS, V>;
    default: return nullptr;
  }
}
#endif

}  // namespace

const QDotKernel* qdot_kernel_kquant(GgmlType t, QIsa isa) {
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
