#pragma once
// Row-by-column dot-product kernels for small batches (decode): each weight row is
// read once from memory and multiplied with up to four activation rows while it is
// in registers/L1. Output: y[c * ldy + r] for rows r in [r0, r1), columns c in [0, n).
#include <cstdint>

#include "kernels/qdot.h"
#include "model/model_file.h"

namespace seer {

// Weight rows processed together (sharing each chunk of the activations from L1).
// Quantized weights always go one row at a time, streamed start to end, each block
// dotted with every column while in registers. For float weights one or two
// columns go one row at a time too, more in groups of 8 rows. Measured on llama-125m,
// 2 threads (docs/kernels.md): 8-row groups made Q8_0 decode 57 tok/s instead of
// 137 at batch 1 and a batch of 4 take 20.4 ms instead of 11.3 (the register tiles
// interleave rows for no reuse there); for F16 the two are level from 4 columns on.
// The group does not change any output's summation order (one accumulator per row
// and column, fixed k chunks), so a token's logits stay the same in any batch.
// The activation quantization a weight type's dot kernel takes (None: float weights).
ActKind activation_kind(GgmlType t);
inline bool is_quantized(GgmlType t) { return activation_kind(t) != ActKind::None; }
inline int64_t row_group(GgmlType weights, int64_t n) { return is_quantized(weights) || n <= 2 ? 1 : 8; }

// F32, F16 and BF16 weights with f32 activations x (n x w.cols).
void dot_rows_float(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                    int64_t ldy);

// n activation rows quantized by quantize_act.h, in the form the weight type takes
// (activation_kind): Q8: q8 (n x k int8), d8 and s8 (n x k/32 scales and d * sums);
// Q8K: q8k (n x k/256 blocks).
struct QuantActs {
  const int8_t* q8 = nullptr;
  const float* d8 = nullptr;
  const float* s8 = nullptr;
  const BlockQ8_K* q8k = nullptr;
};

// Quantized weights (is_quantized) with the fastest kernel compiled for this CPU.
void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a, int64_t n, float* y,
                    int64_t ldy);
// The same with a given kernel (tests compare every instruction set's kernel).
void dot_rows_quant_with(const QDotKernel& k, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a,
                         int64_t n, float* y, int64_t ldy);

// From this many columns on, dot_rows_quant uses the kernel's GEMM tile where it has one
// (bit-identical to the tile kernel, qdot.h). bench_qdot (768 x 3072, one thread): the
// GEMM tiles were ahead from 2 columns on (Q8_0 +16 %, Q4_K +28 %, Q6_K +56 % at n = 2;
// docs/kernels.md). The default of QDotKernel::gemm_min_cols; the 512-bit GEMM tile of
// Q8_0, Q4_0, Q5_0 and IQ4_NL starts at one column (dot_rows16_avx512.cc).
inline constexpr int64_t kQGemmMinCols = 2;
// The GEMM driver with a given kernel (k.gemm must be set; tests and benchmarks).
void gemm_rows_quant_with(const QDotKernel& k, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a,
                          int64_t n, float* y, int64_t ldy);

}  // namespace seer
