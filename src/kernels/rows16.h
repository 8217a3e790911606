#pragma once
// What the two sixteen-row GEMM tiles of the 32-element types whose block is a scale and
// signed values (Q8_0, Q4_0, Q5_0, IQ4_NL) share: the AVX-512 VNNI one
// (dot_rows16_avx512.cc) and the AMX one (dot_rows16_amx.cc), which leaves tiles of
// fewer than 16 columns to the former. The two give the same bits (qdot.h): per (row, column) the exact integer dot of each block, then
// acc = fma(d_w * d_x, float(dot), acc) block after block.
#include <algorithm>
#include <cstdint>

#include "kernels/qdot.h"
#include "kernels/qdot_simd.h"

namespace seer::rows16 {

constexpr int kRows = 16, kCols = 16;

// A column tile's activations, block after block, as the GEMM tiles read them (packed
// once per column block by QDotKernel::pack). Columns past the tile's nc are not written.
// The 512-bit tile's: per column its 32 quants, 4 to an int32 as dpbusd takes them, then
// the kCols scales and the kCols values -128 * sum(quants) (the dot's start).
struct PackedBlock {
  int32_t q[kCols][kQK / 4];
  float d[kCols];
  int32_t start[kCols];
};
// The AMX tile's, for full tiles: group j of column c at q[j][c], which is an AMX B tile
// as it is, then the scales; as long as PackedBlock, so one stride serves both.
struct AmxPackedBlock {
  int32_t q[kQK / 4][kCols];
  float d[kCols];
  int32_t unused[kCols];
};
static_assert(sizeof(AmxPackedBlock) == sizeof(PackedBlock));

#if defined(SEER_QDOT_AVX2) && defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && \
    defined(__AVX512VNNI__)
#define SEER_QDOT_AVX512 1

// A block's 32 signed weights.
inline __m256i weights256(const BlockQ8_0& b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs)); }
inline __m256i weights256(const BlockQ4_0& b) {
  return _mm256_sub_epi8(qsimd::nibbles32(b.qs), _mm256_set1_epi8(8));
}
inline __m256i weights256(const BlockQ5_0& b) {
  return _mm256_sub_epi8(qsimd::five_bit(b.qs, b.qh), _mm256_set1_epi8(16));
}
inline __m256i weights256(const BlockIQ4_NL& b) {
  return _mm256_shuffle_epi8(qsimd::iq4nl_table(), qsimd::nibbles32(b.qs));
}

// The fp16 scales of 16 blocks at `first` + byte_offsets (lanes off in `valid` read
// nothing and are 0), as f32.
inline __m512 scales16(const void* first, __m512i byte_offsets, __mmask16 valid) {
  const __m512i words = _mm512_mask_i32gather_epi32(_mm512_setzero_si512(), valid, byte_offsets, first, 1);
  return _mm512_cvtph_ps(_mm512_cvtepi32_epi16(words));
}

// The byte offsets of 16 weight rows from the first (a GEMM tile's rows).
inline __m512i row_offsets(const void* const* w) {
  alignas(64) int32_t offs[kRows];
  for (int r = 0; r < kRows; ++r)
    offs[r] = static_cast<int32_t>(static_cast<const char*>(w[r]) - static_cast<const char*>(w[0]));
  return _mm512_load_si512(offs);
}

// The next tile's rows, into L2: a task's tiles go down its rows, which are contiguous,
// so the 16 rows after these start 16 row strides on; each block step hints the bytes
// of 16 blocks from there, in order, so the tile after this one is in L2 by its turn
// (16 interleaved streams defeat the hardware prefetcher; docs/kernels-prefill.md).
inline const char* next_tile(const void* const* w) {
  const auto* first = static_cast<const char*>(w[0]);
  return first + (static_cast<const char*>(w[1]) - first) * kRows;
}
template <class Block>
inline void prefetch_next_tile(const char* ahead) {
  constexpr int kStepBytes = kRows * static_cast<int>(sizeof(Block));
#pragma GCC unroll 16
  for (int off = 0; off < kStepBytes; off += 64) _mm_prefetch(ahead + off, _MM_HINT_T1);
}
#endif

}  // namespace seer::rows16
