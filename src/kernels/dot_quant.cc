// Integer dot kernels for Q8_0/Q4_0 weights against Q8 activations (see
// dot_kernels.h), as llama.cpp's AVX2 vec_dot: |w| (u8) times sign(w)*x (s8) with
// maddubs, or with one dpbusd where AVX-VNNI is available.
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

// 8 int32 partial sums of w[i] * x[i] over the 32 lanes; ax = |w|.
inline __m256i block_dot(__m256i ax, __m256i w, __m256i x) {
  const __m256i sy = _mm256_sign_epi8(x, w);
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
  return _mm256_dpbusd_epi32(_mm256_setzero_si256(), ax, sy);
#elif defined(__AVXVNNI__)
  return _mm256_dpbusd_avx_epi32(_mm256_setzero_si256(), ax, sy);
#else
  return _mm256_madd_epi16(_mm256_maddubs_epi16(ax, sy), _mm256_set1_epi16(1));
#endif
}

// acc[c] += w . x[c] over one block, scaled by both block scales.
template <class Block, int NC>
inline void qdot_block(const Block& w, const int8_t* const* xq, const float* const* xd, int64_t b, __m256* acc) {
  const __m256i wv = load_weights(w);
  const __m256i ax = _mm256_sign_epi8(wv, wv);
  const float dw = _cvtsh_ss(w.d);
#pragma GCC unroll 4
  for (int c = 0; c < NC; ++c) {
    const __m256i xv = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq[c] + b * kQK));
    const __m256 p = _mm256_cvtepi32_ps(block_dot(ax, wv, xv));
    acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(dw * xd[c][b]), p, acc[c]);
  }
}

template <class Block, int NC>
inline void qdot_row(const Block* w, const int8_t* const* xq, const float* const* xd, int64_t nb, float* out) {
  // Two accumulator sets (even and odd blocks) so consecutive FMAs do not wait on
  // each other; indices are compile-time so the accumulators stay in registers.
  __m256 even[NC], odd[NC];
#pragma GCC unroll 4
  for (int c = 0; c < NC; ++c) even[c] = odd[c] = _mm256_setzero_ps();
  int64_t b = 0;
  for (; b + 2 <= nb; b += 2) {
    qdot_block<Block, NC>(w[b], xq, xd, b, even);
    qdot_block<Block, NC>(w[b + 1], xq, xd, b + 1, odd);
  }
  if (b < nb) qdot_block<Block, NC>(w[b], xq, xd, b, even);
#pragma GCC unroll 4
  for (int c = 0; c < NC; ++c) out[c] = simd::hsum(_mm256_add_ps(even[c], odd[c]));
}
#endif

inline int8_t weight_at(const BlockQ8_0& b, int j) { return b.qs[j]; }
inline int8_t weight_at(const BlockQ4_0& b, int j) {
  return static_cast<int8_t>((j < kQK / 2 ? (b.qs[j] & 0x0f) : (b.qs[j - kQK / 2] >> 4)) - 8);
}

template <class Block, int NC>
inline void qdot_row_scalar(const Block* w, const int8_t* const* xq, const float* const* xd, int64_t nb,
                            float* out) {
  for (int c = 0; c < NC; ++c) {
    float s = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
      int32_t isum = 0;
      for (int j = 0; j < kQK; ++j) isum += int32_t{weight_at(w[b], j)} * xq[c][b * kQK + j];
      s += fp16_to_fp32(w[b].d) * xd[c][b] * static_cast<float>(isum);
    }
    out[c] = s;
  }
}

template <class Block, int NC>
inline void qdot(const Block* w, const int8_t* const* xq, const float* const* xd, int64_t nb, float* out) {
#ifdef SEER_QDOT_AVX2
  qdot_row<Block, NC>(w, xq, xd, nb, out);
#else
  qdot_row_scalar<Block, NC>(w, xq, xd, nb, out);
#endif
}

// Row groups and fixed k chunks, as dot_rows in dot_float.cc (and for the same
// reasons): kChunkBlocks blocks of 32 per chunk.
constexpr int64_t kChunkBlocks = 32;
constexpr int64_t kRowGroup = 8;

template <class Block>
void qdot_rows(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n, float* y,
               int64_t ldy) {
  const int64_t k = w.cols;
  const int64_t nb = k / kQK;
  const Block* base = static_cast<const Block*>(w.data);
  thread_local std::vector<float> acc;  // per pool thread, reused across calls
  // One or two columns: stream each weight row start to end (the prefetchers' best
  // case; x is small). More columns: groups of rows share each x chunk from L1.
  const int64_t group = n <= 2 ? 1 : kRowGroup;
  for (int64_t g0 = r0; g0 < r1; g0 += group) {
    const int64_t g1 = std::min(r1, g0 + group);
    acc.assign(static_cast<size_t>((g1 - g0) * n), 0.0f);
    for (int64_t b0 = 0; b0 < nb; b0 += kChunkBlocks) {
      const int64_t bc = std::min(kChunkBlocks, nb - b0);
      for (int64_t r = g0; r < g1; ++r) {
        const Block* row = base + r * nb + b0;
        for (int64_t c0 = 0; c0 < n; c0 += 4) {
          const int8_t* qs[4];
          const float* ds[4];
          float out[4];
          const int nc = static_cast<int>(std::min<int64_t>(4, n - c0));
          for (int c = 0; c < nc; ++c) {
            qs[c] = xq + (c0 + c) * k + b0 * kQK;
            ds[c] = xd + (c0 + c) * nb + b0;
          }
          switch (nc) {
            case 4: qdot<Block, 4>(row, qs, ds, bc, out); break;
            case 3: qdot<Block, 3>(row, qs, ds, bc, out); break;
            case 2: qdot<Block, 2>(row, qs, ds, bc, out); break;
            default: qdot<Block, 1>(row, qs, ds, bc, out); break;
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

void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n,
                    float* y, int64_t ldy) {
  switch (w.type) {
    case GgmlType::Q8_0: return qdot_rows<BlockQ8_0>(w, r0, r1, xq, xd, n, y, ldy);
    case GgmlType::Q4_0: return qdot_rows<BlockQ4_0>(w, r0, r1, xq, xd, n, y, ldy);
    default: fail("dot_rows_quant: tensor '{}' has type {}", w.name, ggml_type_name(w.type));
  }
}

}  // namespace seer
