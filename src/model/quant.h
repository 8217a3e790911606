#pragma once
// Element conversions and the GGML block formats seer computes with. The layouts
// (model/quant_blocks.h) are byte-compatible with GGUF files written by llama.cpp;
// the dequantizers reproduce ggml's reference dequantization bit for bit
// (tests/model/quant_ref_test.cc checks them against bytes and floats from ggml).
//
// One file per family: quant_legacy.cc (the 32-element formats), quant_k.cc (the
// K-quants), quant_iq.cc (IQ4_NL, IQ4_XS). n is the element count of a row and
// must be a multiple of the type's block size.
#include <cstdint>
#include <cstring>

#include "model/ggml_types.h"
#include "model/quant_blocks.h"

namespace seer {

float fp16_to_fp32(uint16_t h);
uint16_t fp32_to_fp16(float f);  // round to nearest even
inline float bf16_to_fp32(uint16_t h) {
  uint32_t bits = uint32_t{h} << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}
uint16_t fp32_to_bf16(float f);  // round to nearest even

// Q8_0, Q4_0 and Q8_K as ggml defines them (the largest magnitude at the end of
// the range, round to nearest); the others search the scales with the least
// squared error (quant_fit.h), no worse in RMSE than ggml's quantizers on the
// reference input (tests/model/quant_ref_test.cc).
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void quantize_row_q4_1(const float* x, BlockQ4_1* y, int64_t n);
void quantize_row_q5_0(const float* x, BlockQ5_0* y, int64_t n);
void quantize_row_q5_1(const float* x, BlockQ5_1* y, int64_t n);
void quantize_row_q2_k(const float* x, BlockQ2_K* y, int64_t n);
void quantize_row_q3_k(const float* x, BlockQ3_K* y, int64_t n);
void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n);
void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t n);
void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t n);
void quantize_row_q8_k(const float* x, BlockQ8_K* y, int64_t n);
void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* y, int64_t n);
void quantize_row_iq4_xs(const float* x, BlockIQ4_XS* y, int64_t n);

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n);
void dequantize_row_q4_1(const BlockQ4_1* x, float* y, int64_t n);
void dequantize_row_q5_0(const BlockQ5_0* x, float* y, int64_t n);
void dequantize_row_q5_1(const BlockQ5_1* x, float* y, int64_t n);
void dequantize_row_q2_k(const BlockQ2_K* x, float* y, int64_t n);
void dequantize_row_q3_k(const BlockQ3_K* x, float* y, int64_t n);
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t n);
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, int64_t n);
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, int64_t n);
void dequantize_row_q8_k(const BlockQ8_K* x, float* y, int64_t n);
void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t n);
void dequantize_row_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t n);

// The 6-bit scale and minimum of sub-block j (0..7) of a Q4_K/Q5_K super-block.
struct KScaleMin {
  uint8_t scale, min;
};
KScaleMin k_scale_min(const uint8_t* scales, int j);
// The signed 6-bit scale of sub-block j (0..15) of a Q3_K super-block (-32..31).
int q3_k_scale(const uint8_t* scales, int j);
// The signed scale of sub-block j (0..7) of an IQ4_XS super-block (-32..31).
int iq4_xs_scale(const BlockIQ4_XS& b, int j);

// Any type with a (de)quantizer from/to f32 (n elements; ggml_row_bytes(t, n)
// bytes at dst/src). Throws seer::Error for the others.
void quantize_row(GgmlType t, const float* x, void* dst, int64_t n);
void dequantize_row(GgmlType t, const void* src, float* y, int64_t n);

}  // namespace seer
