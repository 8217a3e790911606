#pragma once
// Row-by-column dot-product kernels for small batches (decode): each weight row is
// read once from memory and multiplied with up to four activation rows while it is
// in registers/L1. Output: y[c * ldy + r] for rows r in [r0, r1), columns c in [0, n).
#include <cstdint>

#include "model/model_file.h"

namespace seer {

// Weight rows processed together (sharing each chunk of the activations from L1).
// For one or two columns a group is one row, streamed start to end: with 8-row
// groups single-stream decode of llama-125m Q8_0 ran at 57 tok/s instead of 137 on
// one thread (the register tiles then interleave rows for no reuse). The group
// does not change any output's summation order (one accumulator per row and column,
// fixed k chunks), so a token's logits stay the same in any batch.
inline int64_t row_group(int64_t n) { return n <= 2 ? 1 : 8; }

// F32, F16 and BF16 weights with f32 activations x (n x w.cols).
void dot_rows_float(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                    int64_t ldy);

// Q8_0 and Q4_0 weights with activations quantized by quantize_act_q8: xq (n x
// w.cols int8), xd (n x w.cols/32 scales).
void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const int8_t* xq, const float* xd, int64_t n,
                    float* y, int64_t ldy);

}  // namespace seer
