#pragma once
// Activations quantized to int8 in blocks of 32 (one f32 scale per block), the
// partner of Q8_0/Q4_0 weights in the integer dot products (as llama.cpp's
// vec_dot_type, but with an f32 instead of an f16 scale).
#include <cstdint>

namespace seer {

// x: k floats (k a multiple of 32) -> q: k int8, d: k/32 scales. Rounds to nearest
// even, so q[i] * d[i/32] is the value the integer kernels compute with.
void quantize_act_q8(const float* x, int64_t k, int8_t* q, float* d);
// The inverse, used when a large batch takes the sgemm path so that a token's result
// does not depend on which path its batch took.
void dequantize_act_q8(const int8_t* q, const float* d, int64_t k, float* x);

}  // namespace seer
