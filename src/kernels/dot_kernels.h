#pragma once
// Row-by-column dot-product kernels for small batches (decode): each weight row is
// read once from memory and multiplied with up to four activation rows while it is
// in registers/L1. Output: y[c * ldy + r] for rows r in [r0, r1), columns c in [0, n).
#include <cstdint>

#include "model/model_file.h"

namespace seer {

// F32, F16 and BF16 weights with f32 activations x (n x w.cols).
void dot_rows_float(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                    int64_t ldy);

// Q8_0 and Q4_0 weights with activations quantized by quantize_act_q8: xq (n x
// w.cols int8), xd (n x w.cols/32 scales).
void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n,
                    float* y, int64_t ldy);

}  // namespace seer
