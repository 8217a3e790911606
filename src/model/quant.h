#pragma once
// Element conversions and the GGML block layouts seer computes with. The layouts
// are byte-compatible with GGUF files written by llama.cpp's converters.
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

// n must be a multiple of kQK for the block formats.
void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n);
void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n);
void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n);
void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n);

// Any computable type from/to f32 (n elements; ggml_row_bytes(t, n) bytes at dst/src).
// Throws seer::Error for the types seer cannot compute with.
void quantize_row(GgmlType t, const float* x, void* dst, int64_t n);
void dequantize_row(GgmlType t, const void* src, float* y, int64_t n);

}  // namespace seer
