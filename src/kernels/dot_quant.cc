// Integer dot kernels for Q8_0/Q4_0 weights against Q8 activations (see
// dot_kernels.h), as llama.cpp's AVX2 vec_dot: |w| (u8) times sign(w)*x (s8) with
// maddubs; where VNNI is available, one dpbusd of (x + 128) as u8 against w started
// from -128 * sum(w), which needs no per-pair sign fix-up.
#include <algorithm>
#include <vector>

#include "common/error.h"
#include "kernels/dot_kernels.h"
#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SEER_QDOT_AVX2 1

inline __m256i load_weights(const BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
inline __m256i load_weights(const BlockQ4_0& b) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);  // low nibbles, then high
  return _mm256_sub_epi8(_mm256_and_si256(both, _mm256_set1_epi8(0x0f)), _mm256_set1_epi8(8));
}

#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
#define SEER_QDOT_VNNI 1
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_epi32(acc, u, s); }
#elif defined(__AVXVNNI__)
#define SEER_QDOT_VNNI 1
inline __m256i dpbusd(__m256i acc, __m256i u, __m256i s) { return _mm256_dpbusd_avx_epi32(acc, u, s); }
#endif

// One weight block prepared for the dot products with every column of a tile.
struct WeightBlock {
  __m256i w;     // the 32 weights (s8)
  __m256i aux;   // VNNI: -128 * (sums of 4 weights), the start value; else |w|
  float d;       // block scale
};

// One activation block prepared likewise.
struct ActBlock {
  __m256i x;  // VNNI: x + 128 as u8; else x (s8)
  float d;
};

template <class Block>
inline WeightBlock prepare(const Block& b) {
  WeightBlock p;
  p.w = load_weights(b);
#ifdef SEER_QDOT_VNNI
  p.aux = _mm256_sub_epi32(_mm256_setzero_si256(), dpbusd(_mm256_setzero_si256(), _mm256_set1_epi8(-128), p.w));
#else
  p.aux = _mm256_sign_epi8(p.w, p.w);
#endif
  p.d = _cvtsh_ss(b.d);
  return p;
}

inline ActBlock prepare(const int8_t* xq, float d) {
  __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
#ifdef SEER_QDOT_VNNI
  x = _mm256_xor_si256(x, _mm256_set1_epi8(-128));
#endif
  return {x, d};
}

// 8 int32 partial sums of w[i] * x[i] over the 32 lanes (exact). With VNNI:
// (x + 128) . w - 128 * sum(w) in one dpbusd; else |w| . sign(x, w) as llama.cpp.
inline __m256i block_dot(const WeightBlock& w, const ActBlock& x) {
#ifdef SEER_QDOT_VNNI
  return dpbusd(w.aux, x.x, w.w);
#else
  const __m256i sy = _mm256_sign_epi8(x.x, w.w);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w.aux, sy), _mm256_set1_epi16(1));
#endif
}

// Columns per register tile: C accumulators, C activation blocks and a weight block.
constexpr int kMaxC = 4;

// out[c] = w . x[c] over nb blocks for one weight row and C columns: each weight
// block is loaded and prepared once. One accumulator per column: an output's
// summation order does not depend on the tile it is computed in.
template <class Block, int C>
inline void qdot_tile(const Block* w, const int8_t* const* xq, const float* const* xd, int64_t nb, float* out) {
  __m256 acc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    const WeightBlock wb = prepare(w[b]);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const ActBlock xs = prepare(xq[c] + b * kQK, xd[c][b]);
      const __m256 p = _mm256_cvtepi32_ps(block_dot(wb, xs));
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(wb.d * xs.d), p, acc[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = simd::hsum(acc[c]);
}
#endif

#ifndef SEER_QDOT_AVX2
constexpr int kMaxC = 4;
#endif

inline int8_t weight_at(const BlockQ8_0& b, int j) { return b.qs[j]; }
inline int8_t weight_at(const BlockQ4_0& b, int j) {
  return static_cast<int8_t>((j < kQK / 2 ? (b.qs[j] & 0x0f) : (b.qs[j - kQK / 2] >> 4)) - 8);
}

// out[c] for one weight row and nc <= kMaxC columns.
template <class Block>
void qdot_tile_n(int nc, const Block* w, const int8_t* const* xq, const float* const* xd, int64_t nb, float* out) {
#ifdef SEER_QDOT_AVX2
  switch (nc) {
    case 4: return qdot_tile<Block, 4>(w, xq, xd, nb, out);
    case 3: return qdot_tile<Block, 3>(w, xq, xd, nb, out);
    case 2: return qdot_tile<Block, 2>(w, xq, xd, nb, out);
    default: return qdot_tile<Block, 1>(w, xq, xd, nb, out);
  }
#else
  for (int c = 0; c < nc; ++c) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (int j = 0; j < kQK; ++j) isum += int32_t{weight_at(w[b], j)} * xq[c][b * kQK + j];
      s += fp16_to_fp32(w[b].d) * xd[c][b] * static_cast<float>(isum);
    }
    out[c] = s;
  }
#endif
}

// One weight row at a time (row_group in dot_kernels.h says why), in fixed k chunks
// of kChunkBlocks blocks of 32 as dot_rows in dot_float.cc, so each output's
// summation order does not depend on the batch.
constexpr int64_t kChunkBlocks = 32;

template <class Block>
void qdot_rows(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n, float* y,
               int64_t ldy) {
  const int64_t k = w.cols;
  const int64_t nb = k / kQK;
  const Block* base = static_cast<const Block*>(w.data);
  thread_local std::vector<float> acc;  // per pool thread, reused across calls
  for (int64_t r = r0; r < r1; ++r) {
    acc.assign(static_cast<size_t>(n), 0.0f);
    for (int64_t b0 = 0; b0 < nb; b0 += kChunkBlocks) {
      const int64_t bc = std::min(kChunkBlocks, nb - b0);
      for (int64_t c0 = 0; c0 < n; c0 += kMaxC) {
        const int nc = static_cast<int>(std::min<int64_t>(kMaxC, n - c0));
        const int8_t* qs[kMaxC];
        const float* ds[kMaxC];
        float out[kMaxC];
        for (int c = 0; c < nc; ++c) {
          qs[c] = xq + (c0 + c) * k + b0 * kQK;
          ds[c] = xd + (c0 + c) * nb + b0;
        }
        qdot_tile_n<Block>(nc, base + r * nb + b0, qs, ds, bc, out);
        for (int c = 0; c < nc; ++c) acc[c0 + c] += out[c];
      }
    }
    for (int64_t c = 0; c < n; ++c) y[c * ldy + r] = acc[c];
  }
}

}  // namespace

void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n,
                    float* y, int64_t ldy) {
  switch (w.type) {
    case GgmlType::Q8_0: return qdot_rows<BlockQ8_0>(w, r0, r1, xq, xd, n, y, ldy);
    case GgmlType::Q4_0: return qdot_rows<BlockQ4_0>(w, r0, r1, xq, xd, n, y, ldy);
    default: fail("dot_rows_quant: tensor '{}' has type {}", w.name, ggml_type_name(w.type));
  }
}

}  // namespace seer
