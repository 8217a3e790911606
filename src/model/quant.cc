#include "model/quant.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {

float fp16_to_fp32(uint16_t h) {
  uint32_t sign = uint32_t{h & 0x8000u} << 16;
  uint32_t exp = (h >> 10) & 0x1f;
  uint32_t mant = h & 0x3ff;
  uint32_t bits;
  if (exp == 0) {
    if (mant == 0) {
      bits = sign;
    } else {  // subnormal: renormalize
      int e = -1;
      do {
        ++e;
        mant <<= 1;
      } while ((mant & 0x400) == 0);
      bits = sign | (uint32_t(127 - 15 - e) << 23) | ((mant & 0x3ff) << 13);
    }
  } else if (exp == 31) {
    bits = sign | 0x7f800000u | (mant << 13);
  } else {
    bits = sign | ((exp + 127 - 15) << 23) | (mant << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

uint16_t fp32_to_fp16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  uint32_t sign = (x >> 16) & 0x8000;
  uint32_t absx = x & 0x7fffffff;
  if (absx >= 0x7f800000) return static_cast<uint16_t>(sign | 0x7c00 | (absx > 0x7f800000 ? 0x200 : 0));
  if (absx >= 0x477ff000) return static_cast<uint16_t>(sign | 0x7c00);  // overflow to inf
  if (absx < 0x38800000) {  // subnormal or zero in fp16
    float a;
    std::memcpy(&a, &absx, 4);
    // 2^-24 is the fp16 subnormal unit; nearbyint rounds to nearest even.
    uint32_t m = static_cast<uint32_t>(std::nearbyint(a * 16777216.0f));
    return static_cast<uint16_t>(sign | m);
  }
  uint32_t mant = absx & 0x7fffff;
  uint32_t exp = (absx >> 23) - 127 + 15;
  uint32_t h = (exp << 10) | (mant >> 13);
  uint32_t rest = mant & 0x1fff;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return static_cast<uint16_t>(sign | h);
}

uint16_t fp32_to_bf16(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  if ((x & 0x7fffffff) > 0x7f800000) return static_cast<uint16_t>((x >> 16) | 0x40);  // quiet NaN
  x += 0x7fff + ((x >> 16) & 1);
  return static_cast<uint16_t>(x >> 16);
}

void quantize_row(GgmlType t, const float* x, void* dst, int64_t n) {
  switch (t) {
    case GgmlType::F32: std::memcpy(dst, x, static_cast<size_t>(n) * sizeof(float)); return;
    case GgmlType::F16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_fp16(x[i]);
      return;
    }
    case GgmlType::BF16: {
      auto* y = static_cast<uint16_t*>(dst);
      for (int64_t i = 0; i < n; ++i) y[i] = fp32_to_bf16(x[i]);
      return;
    }
    case GgmlType::Q8_0: return quantize_row_q8_0(x, static_cast<BlockQ8_0*>(dst), n);
    case GgmlType::Q4_0: return quantize_row_q4_0(x, static_cast<BlockQ4_0*>(dst), n);
    case GgmlType::Q4_1: return quantize_row_q4_1(x, static_cast<BlockQ4_1*>(dst), n);
    case GgmlType::Q5_0: return quantize_row_q5_0(x, static_cast<BlockQ5_0*>(dst), n);
    case GgmlType::Q5_1: return quantize_row_q5_1(x, static_cast<BlockQ5_1*>(dst), n);
    case GgmlType::Q2_K: return quantize_row_q2_k(x, static_cast<BlockQ2_K*>(dst), n);
    case GgmlType::Q3_K: return quantize_row_q3_k(x, static_cast<BlockQ3_K*>(dst), n);
    case GgmlType::Q4_K: return quantize_row_q4_k(x, static_cast<BlockQ4_K*>(dst), n);
    case GgmlType::Q5_K: return quantize_row_q5_k(x, static_cast<BlockQ5_K*>(dst), n);
    case GgmlType::Q6_K: return quantize_row_q6_k(x, static_cast<BlockQ6_K*>(dst), n);
    case GgmlType::Q8_K: return quantize_row_q8_k(x, static_cast<BlockQ8_K*>(dst), n);
    case GgmlType::IQ4_NL: return quantize_row_iq4_nl(x, static_cast<BlockIQ4_NL*>(dst), n);
    case GgmlType::IQ4_XS: return quantize_row_iq4_xs(x, static_cast<BlockIQ4_XS*>(dst), n);
    default: fail("cannot quantize to {}", ggml_type_name(t));
  }
}

void dequantize_row(GgmlType t, const void* src, float* y, int64_t n) {
  switch (t) {
    case GgmlType::F32: std::memcpy(y, src, static_cast<size_t>(n) * sizeof(float)); return;
    case GgmlType::F16: {
      const auto* x = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = fp16_to_fp32(x[i]);
      return;
    }
    case GgmlType::BF16: {
      const auto* x = static_cast<const uint16_t*>(src);
      for (int64_t i = 0; i < n; ++i) y[i] = bf16_to_fp32(x[i]);
      return;
    }
    case GgmlType::Q8_0: return dequantize_row_q8_0(static_cast<const BlockQ8_0*>(src), y, n);
    case GgmlType::Q4_0: return dequantize_row_q4_0(static_cast<const BlockQ4_0*>(src), y, n);
    case GgmlType::Q4_1: return dequantize_row_q4_1(static_cast<const BlockQ4_1*>(src), y, n);
    case GgmlType::Q5_0: return dequantize_row_q5_0(static_cast<const BlockQ5_0*>(src), y, n);
    case GgmlType::Q5_1: return dequantize_row_q5_1(static_cast<const BlockQ5_1*>(src), y, n);
    case GgmlType::Q2_K: return dequantize_row_q2_k(static_cast<const BlockQ2_K*>(src), y, n);
    case GgmlType::Q3_K: return dequantize_row_q3_k(static_cast<const BlockQ3_K*>(src), y, n);
    case GgmlType::Q4_K: return dequantize_row_q4_k(static_cast<const BlockQ4_K*>(src), y, n);
    case GgmlType::Q5_K: return dequantize_row_q5_k(static_cast<const BlockQ5_K*>(src), y, n);
    case GgmlType::Q6_K: return dequantize_row_q6_k(static_cast<const BlockQ6_K*>(src), y, n);
    case GgmlType::Q8_K: return dequantize_row_q8_k(static_cast<const BlockQ8_K*>(src), y, n);
    case GgmlType::IQ4_NL: return dequantize_row_iq4_nl(static_cast<const BlockIQ4_NL*>(src), y, n);
    case GgmlType::IQ4_XS: return dequantize_row_iq4_xs(static_cast<const BlockIQ4_XS*>(src), y, n);
    default: fail("cannot convert {} to f32", ggml_type_name(t));
  }
}

}  // namespace seer
