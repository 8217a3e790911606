#pragma once
// The decode (dot) path for block-quantized weights that have no integer dot
// kernel yet (Q4_1, Q5_0, Q5_1, the K-quants, IQ4_NL, IQ4_XS): each weight row is
// dequantized to f32 once and dotted with every activation row in f32.
//
// Selected in one place: dot_rows_float's fallback for non-float types
// (kernels/dot_float.cc). A type that gets an integer kernel (is_quantized() in
// dot_kernels.h) is routed to dot_rows_quant by MatmulContext and never reaches it.
#include <cstdint>

#include "model/model_file.h"

namespace seer {

// Same contract as dot_rows_float: y[c * ldy + r] for rows r in [r0, r1) and the n
// activation rows of x (n x w.cols). The summation order of an output does not
// depend on n, so a token gets the same bits alone or in any batch.
void dot_rows_dequant(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                      int64_t ldy);

}  // namespace seer
