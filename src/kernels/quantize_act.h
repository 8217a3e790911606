#pragma once
// Activations quantized to int8 for the integer dot kernels (as llama.cpp's
// vec_dot_type, with f32 scales):
//  * Q8 in blocks of 32 (one f32 scale each), the partner of the 32-element weight
//    types; the per-block sums d * sum(q) serve the types with a minimum or an offset
//    (Q4_1, Q5_0, Q5_1, IQ4_NL);
//  * Q8_K in blocks of 256 (BlockQ8_K: f32 scale, sums of each 16 quants), the partner
//    of the K-quants and IQ4_XS.
// Both round to nearest even with d = max|x| / 127, so |q| <= 127 and q * d is the
// value the integer kernels compute with.
#include <cstdint>

#include "model/quant_blocks.h"

namespace seer {

// x: k floats (k a multiple of 32) -> q: k int8, d: k/32 scales, and when s is not
// null s: k/32 values d * sum(q) of each block.
void quantize_act_q8(const float* x, int64_t k, int8_t* q, float* d, float* s = nullptr);
// The inverse, used when a large batch takes the sgemm path so that a token's result
// does not depend on which path its batch took.
void dequantize_act_q8(const int8_t* q, const float* d, int64_t k, float* x);

// x: k floats (k a multiple of 256) -> k/256 blocks.
void quantize_act_q8k(const float* x, int64_t k, BlockQ8_K* y);
void dequantize_act_q8k(const BlockQ8_K* y, int64_t k, float* x);

}  // namespace seer
