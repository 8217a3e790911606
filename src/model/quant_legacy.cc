// The 32-element block formats: Q8_0, Q4_0, Q4_1, Q5_0, Q5_1.
#include <algorithm>
#include <cmath>

#include "model/quant.h"
#include "model/quant_fit.h"

namespace seer {
namespace {

// The fifth bits of a Q5 block: bit j for element j.
uint32_t q5_high_bits(const uint8_t (&qh)[4]) {
  return uint32_t{qh[0]} | uint32_t{qh[1]} << 8 | uint32_t{qh[2]} << 16 | uint32_t{qh[3]} << 24;
}

}  // namespace

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    float amax = 0.0f;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(xb[j]));
    float d = amax / 127.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK; ++j) y[b].qs[j] = static_cast<int8_t>(std::lround(xb[j] * id));
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < kQK; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        max = xb[j];
      }
    }
    float d = max / -8.0f;
    float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = fp32_to_fp16(d);
    for (int j = 0; j < kQK / 2; ++j) {
      int lo = std::min(15, static_cast<int>(xb[j] * id + 8.5f));
      int hi = std::min(15, static_cast<int>(xb[j + kQK / 2] * id + 8.5f));
      y[b].qs[j] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK; ++j) y[j] = x[b].qs[j] * d;
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = (static_cast<int>(x[b].qs[j] & 0x0f) - 8) * d;
      y[j + kQK / 2] = (static_cast<int>(x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = (x[b].qs[j] & 0x0f) * d + m;
      y[j + kQK / 2] = (x[b].qs[j] >> 4) * d + m;
    }
  }
}

void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d);
    const uint32_t qh = q5_high_bits(x[b].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (x[b].qs[j] & 0x0f) | ((qh >> j) & 1) << 4;
      const int hi = (x[b].qs[j] >> 4) | ((qh >> (j + kQK / 2)) & 1) << 4;
      y[j] = (lo - 16) * d;
      y[j + kQK / 2] = (hi - 16) * d;
    }
  }
}

void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d), m = fp16_to_fp32(x[b].m);
    const uint32_t qh = q5_high_bits(x[b].qh);
    for (int j = 0; j < kQK / 2; ++j) {
      const int lo = (x[b].qs[j] & 0x0f) | ((qh >> j) & 1) << 4;
      const int hi = (x[b].qs[j] >> 4) | ((qh >> (j + kQK / 2)) & 1) << 4;
      y[j] = lo * d + m;
      y[j + kQK / 2] = hi * d + m;
    }
  }
}

// ---- seer's own search quantizers (least squared error per block) --------------

namespace {

// Q4_1/Q5_1 blocks: the fitted line with d and m rounded to fp16, levels re-chosen
// for the rounded values.
template <int kMax>
void quantize_affine_block(const float* xb, uint16_t& d16, uint16_t& m16, uint8_t* L) {
  const quant_fit::Affine a = quant_fit::fit_affine(xb, kQK, kMax, /*offset_le_zero=*/false, L);
  d16 = fp32_to_fp16(a.scale);
  m16 = fp32_to_fp16(a.offset);
  const float d = fp16_to_fp32(d16), m = fp16_to_fp32(m16);
  quant_fit::affine_error(xb, kQK, kMax, d, -m, L);
}

void pack_q5_high_bits(const uint8_t* L, uint8_t (&qh)[4]) {
  uint32_t bits = 0;
  for (int j = 0; j < kQK; ++j) bits |= static_cast<uint32_t>(L[j] >> 4) << j;
  for (int i = 0; i < 4; ++i) qh[i] = static_cast<uint8_t>(bits >> (8 * i));
}

void pack_nibbles(const uint8_t* L, uint8_t* qs) {
  for (int j = 0; j < kQK / 2; ++j) qs[j] = static_cast<uint8_t>((L[j] & 0x0f) | (L[j + kQK / 2] & 0x0f) << 4);
}

}  // namespace

void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n) {
  uint8_t L[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    quantize_affine_block<15>(x + b * kQK, y[b].d, y[b].m, L);
    pack_nibbles(L, y[b].qs);
  }
}

void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n) {
  uint8_t L[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    quantize_affine_block<31>(x + b * kQK, y[b].d, y[b].m, L);
    pack_nibbles(L, y[b].qs);
    pack_q5_high_bits(L, y[b].qh);
  }
}

void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n) {
  int8_t L[kQK];
  uint8_t U[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    y[b].d = fp32_to_fp16(quant_fit::fit_symmetric(xb, kQK, -16, 15, L));
    quant_fit::symmetric_error(xb, kQK, -16, 15, fp16_to_fp32(y[b].d), L);
    for (int j = 0; j < kQK; ++j) U[j] = static_cast<uint8_t>(L[j] + 16);
    pack_nibbles(U, y[b].qs);
    pack_q5_high_bits(U, y[b].qh);
  }
}

}  // namespace seer
