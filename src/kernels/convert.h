#pragma once
// Conversion of weight rows of any computable type to f32: used for embedding
// lookups and for the f32 tiles fed to sgemm when a batch is large.
#include <cstddef>
#include <cstdint>

#include "model/ggml_types.h"
#include "model/model_file.h"

namespace seer {

void f16_to_f32_row(const uint16_t* x, float* y, int64_t n);
// f32 -> f16, rounding to nearest even: the bits of model/quant.h's fp32_to_fp16 for
// every non-NaN input (F16C where the CPU has it; K/V cache writes).
void f32_to_f16_row(const float* x, uint16_t* y, int64_t n);
void bf16_to_f32_row(const uint16_t* x, float* y, int64_t n);
// n must be a multiple of 32 for the block types.
void q8_0_to_f32_row(const void* x, float* y, int64_t n);
void q4_0_to_f32_row(const void* x, float* y, int64_t n);

// Converts `n` elements of type `type` starting at `data` to f32: vectorized for
// F16/BF16/Q8_0/Q4_0, through model/quant.h's dequantize_row for the other block
// formats. Throws seer::Error for a type without a dequantizer.
void to_f32_row(GgmlType type, const void* data, float* y, int64_t n);

// Address of row `r` of a weight matrix.
inline const void* weight_row(const WeightTensor& w, int64_t r) {
  return static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * ggml_row_bytes(w.type, w.cols);
}

// Rows [r0, r1) of `w` into y ((r1 - r0) x w.cols, row-major).
void weight_rows_to_f32(const WeightTensor& w, int64_t r0, int64_t r1, float* y);

}  // namespace seer
