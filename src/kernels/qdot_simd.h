#pragma once
// 256-bit integer building blocks of the quantized dot kernels (dot_quant.cc,
// dot_q32.cc, dot_kquant.cc). Each kernel is a template over V: V = false uses only
// AVX2 (maddubs + madd), V = true the VNNI forms (dpbusd / dpwssd, from AVX512-VNNI
// with VL or from AVX-VNNI). Both are compiled where the compiler allows, so the
// tests check each against the scalar reference on this machine.
#include "kernels/simd.h"
#include "model/quant_blocks.h"

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SEER_QDOT_AVX2 1
#if (defined(__AVX512VNNI__) && defined(__AVX512VL__)) || defined(__AVXVNNI__)
#define SEER_QDOT_VNNI 1
#endif

#include <cstdint>
#include <cstring>

namespace seer::qsimd {

// acc + sums of 4 products u (u8) * s (s8), exact in int32. The AVX2 form goes through
// maddubs, whose pair sums saturate at int16: callers keep u * s pairs below 2^15
// (u <= 127 with |s| <= 127, or u <= 63).
template <bool V>
inline __m256i dot_u8s8(__m256i acc, __m256i u, __m256i s) {
#ifdef SEER_QDOT_VNNI
  if constexpr (V) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpbusd_epi32(acc, u, s);
#else
    return _mm256_dpbusd_avx_epi32(acc, u, s);
#endif
  }
#endif
  return _mm256_add_epi32(acc, _mm256_madd_epi16(_mm256_maddubs_epi16(u, s), _mm256_set1_epi16(1)));
}

// acc + sums of 2 products of int16 lanes a * b.
template <bool V>
inline __m256i dot_s16(__m256i acc, __m256i a, __m256i b) {
#ifdef SEER_QDOT_VNNI
  if constexpr (V) {
#if defined(__AVX512VNNI__) && defined(__AVX512VL__)
    return _mm256_dpwssd_epi32(acc, a, b);
#else
    return _mm256_dpwssd_avx_epi32(acc, a, b);
#endif
  }
#endif
  return _mm256_add_epi32(acc, _mm256_madd_epi16(a, b));
}

// Hints the cache lines `Bytes` long that lie kPrefetchAhead bytes past p: called once per
// loop step over a weight row with the bytes that step consumes, it keeps the stream
// that far ahead of the loads. A decode step reads each weight once, and with the
// hardware prefetcher alone the Q8_0 tile streamed ~7 GB/s per core on the Xeon here;
// 1-4 KiB ahead gave 9 (bench_qdot) and llama-1b Q8_0 decode 12.3 -> 16.4 tok/s
// (docs/kernels-prefill.md, "Prefetching the weight stream"). Rows of a task are contiguous, so
// near a row's end this already fetches the next row.
constexpr int kPrefetchAhead = 3072;
template <int Bytes>
inline void prefetch_ahead(const void* p) {
  const char* at = static_cast<const char*>(p) + kPrefetchAhead;
#pragma GCC unroll 8
  for (int off = 0; off < Bytes; off += 64) _mm_prefetch(at + off, _MM_HINT_T0);
}

// acc + scale16 * (u . s) per 16-element half: the u8 x s8 pair sums (no saturation
// for u <= 63 or |u|, |s| <= 127) times one int16 scale per lane, the per-sub-block
// scaling of the K-quants.
template <bool V>
inline __m256i dot_u8s8_scaled(__m256i acc, __m256i u, __m256i s, __m256i scale16) {
  return dot_s16<V>(acc, _mm256_maddubs_epi16(u, s), scale16);
}

// 16 bytes of packed 4-bit values: element j < 16 from the low nibble of byte j, element
// j >= 16 from the high nibble of byte j - 16 (the GGML order), one per byte.
inline __m256i nibbles32(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0f));
}

// Byte j = 0xff where bit j of the 32 bits at p is set, else 0.
inline __m256i bits_to_bytes(const uint8_t* p) {
  uint32_t bits;
  std::memcpy(&bits, p, 4);
  const __m256i spread = _mm256_shuffle_epi8(
      _mm256_set1_epi32(static_cast<int>(bits)),
      _mm256_setr_epi8(0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2, 2, 2, 2, 2, 3, 3, 3, 3, 3, 3, 3, 3));
  const __m256i mask = _mm256_set1_epi64x(static_cast<long long>(0x8040201008040201ull));
  return _mm256_cmpeq_epi8(_mm256_and_si256(spread, mask), mask);
}

// 32 five-bit quants (0..31): the low nibbles of qs, bit 4 from bit j of the 32 bits at qh.
inline __m256i five_bit(const uint8_t* qs, const uint8_t* qh) {
  const __m256i high = _mm256_and_si256(bits_to_bytes(qh), _mm256_set1_epi8(0x10));
  return _mm256_or_si256(nibbles32(qs), high);
}

// The IQ4_NL / IQ4_XS value table in both 128-bit lanes, for pshufb lookups.
inline __m256i iq4nl_table() {
  const __m128i t = _mm_loadu_si128(reinterpret_cast<const __m128i*>(kIQ4NLValues));
  return _mm256_set_m128i(t, t);
}

inline float fp16(uint16_t h) { return _cvtsh_ss(h); }

}  // namespace seer::qsimd
#endif
