#include "kernels/convert.h"

#include <cstring>

#include "common/error.h"
#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {

void f16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm512_storeu_ps(y + i, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i))));
#elif defined(__F16C__) && defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm256_storeu_ps(y + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i))));
#endif
  for (; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
}

void f32_to_f16_row(const float* x, uint16_t* y, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16)
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(y + i),
                        _mm512_cvtps_ph(_mm512_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#elif defined(__F16C__) && defined(__AVX2__)
  for (; i + 8 <= n; i += 8)
    _mm_storeu_si128(reinterpret_cast<__m128i*>(y + i),
                     _mm256_cvtps_ph(_mm256_loadu_ps(x + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
#endif
  for (; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
}

void bf16_to_f32_row(const uint16_t* x, float* y, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  for (; i + 16 <= n; i += 16) {
    __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i)));
    _mm512_storeu_ps(y + i, _mm512_castsi512_ps(_mm512_slli_epi32(v, 16)));
  }
#elif defined(__AVX2__)
  for (; i + 8 <= n; i += 8) {
    __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
    _mm256_storeu_ps(y + i, _mm256_castsi256_ps(_mm256_slli_epi32(v, 16)));
  }
#endif
  for (; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
}

void q8_0_to_f32_row(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ8_0*>(x);
  for (int64_t blk = 0; blk < n / kQK; ++blk, y += kQK) {
    const float d = fp16_to_fp32(b[blk].d);
#if defined(__AVX2__)
    const __m256 vd = _mm256_set1_ps(d);
    for (int j = 0; j < kQK; j += 8) {
      __m128i q = _mm_loadl_epi64(reinterpret_cast<const __m128i*>(b[blk].qs + j));
      _mm256_storeu_ps(y + j, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q))));
    }
#else
    for (int j = 0; j < kQK; ++j) y[j] = b[blk].qs[j] * d;
#endif
  }
}

void q4_0_to_f32_row(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_0*>(x);
  for (int64_t blk = 0; blk < n / kQK; ++blk, y += kQK) {
    const float d = fp16_to_fp32(b[blk].d);
#if defined(__AVX2__)
    const __m256 vd = _mm256_set1_ps(d);
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b[blk].qs));
    const __m128i lo = _mm_sub_epi8(_mm_and_si128(raw, _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
    const __m128i hi = _mm_sub_epi8(_mm_and_si128(_mm_srli_epi16(raw, 4), _mm_set1_epi8(0x0f)), _mm_set1_epi8(8));
    _mm256_storeu_ps(y + 0, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(lo))));
    _mm256_storeu_ps(y + 8, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(lo, 8)))));
    _mm256_storeu_ps(y + 16, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(hi))));
    _mm256_storeu_ps(y + 24, _mm256_mul_ps(vd, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(hi, 8)))));
#else
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = (static_cast<int>(b[blk].qs[j] & 0x0f) - 8) * d;
      y[j + kQK / 2] = (static_cast<int>(b[blk].qs[j] >> 4) - 8) * d;
    }
#endif
  }
}

void to_f32_row(GgmlType type, const void* data, float* y, int64_t n) {
  switch (type) {
    case GgmlType::F32:
      std::memcpy(y, data, static_cast<size_t>(n) * sizeof(float));
      return;
    case GgmlType::F16:
      return f16_to_f32_row(static_cast<const uint16_t*>(data), y, n);
    case GgmlType::BF16:
      return bf16_to_f32_row(static_cast<const uint16_t*>(data), y, n);
    case GgmlType::Q8_0:
      return q8_0_to_f32_row(data, y, n);
    case GgmlType::Q4_0:
      return q4_0_to_f32_row(data, y, n);
    default:  // the other block types: the format's own dequantizer (throws for the types seer cannot read)
      return dequantize_row(type, data, y, n);
  }
}

void weight_rows_to_f32(const WeightTensor& w, int64_t r0, int64_t r1, float* y) {
  const size_t row_bytes = ggml_row_bytes(w.type, w.cols);
  const auto* base = static_cast<const uint8_t*>(w.data);
  if (w.type == GgmlType::F32) {  // rows are contiguous
    std::memcpy(y, base + r0 * row_bytes, static_cast<size_t>(r1 - r0) * row_bytes);
    return;
  }
  for (int64_t r = r0; r < r1; ++r) to_f32_row(w.type, base + r * row_bytes, y + (r - r0) * w.cols, w.cols);
}

}  // namespace seer
