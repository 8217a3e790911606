#pragma once
// The integer dot kernels of the quantized weight types, one table entry per type and
// instruction set. dot_rows_quant (dot_kernels.h) picks the best compiled entry; the
// tests run every compiled entry against the scalar one, which is the semantic
// definition (dequantized weight x dequantized activation, integer sums inside blocks).
//
// A tile kernel dots one weight row (nb blocks, a chunk of the row) with nc <= kQMaxC
// activation columns and writes out[c]. Each column has its own accumulators, so an
// output does not depend on nc or on the other columns (batch invariance).
#include <cstddef>
#include <cstdint>

#include "model/ggml_types.h"
#include "model/quant_blocks.h"

namespace seer {

constexpr int kQMaxC = 4;

// How a weight type's partner activations are quantized (quantize_act.h).
enum class ActKind { None, Q8, Q8K };

// Instruction sets a kernel is written for. Vnni: AVX-512 VNNI (with VL) or AVX-VNNI
// on 256-bit vectors; Avx512: 512-bit vectors with AVX-512 VNNI (Q8_0, Q4_0, Q5_0 and
// IQ4_NL in dot_rows16_avx512.cc; the K-quants' 512-bit GEMM tiles are in their Vnni entry);
// Amx: the Avx512 entry with an AMX int8 GEMM tile (dot_rows16_amx.cc), present only on
// a CPU with AMX whose kernel grants the tile registers.
enum class QIsa { Scalar, Avx2, Vnni, Avx512, Amx };
inline constexpr QIsa kAllQIsas[] = {QIsa::Scalar, QIsa::Avx2, QIsa::Vnni, QIsa::Avx512, QIsa::Amx};
const char* qisa_name(QIsa isa);

// Per column, the activations of the chunk the tile covers.
struct QActCols {
  const int8_t* q[kQMaxC];      // Q8: 32 * nb quants
  const float* d[kQMaxC];       // Q8: nb scales
  const float* s[kQMaxC];       // Q8: nb values d * sum(q)
  const BlockQ8_K* k[kQMaxC];   // Q8K: nb blocks
};

using QTileFn = void (*)(const void* w, int64_t nb, const QActCols& x, int nc, float* out);

// The GEMM tile (prefill): gemm_rows weight rows x nc <= gemm_cols columns over nb
// blocks (at most kQGemmMaxR x kQGemmMaxC), so each prepared weight block serves
// several columns and each loaded activation block several rows. Its output for a (row, column) is bit-identical to the tile
// kernel's of the same entry: the same integer lanes (exact in any order), the same
// per-block f32 scaling and the same f32 summation order. So the row driver may switch
// between the two by batch size without changing any token's result.
constexpr int kQGemmMaxR = 16;
constexpr int kQGemmMaxC = 64;  // one column block of the driver (dot_quant.cc)

// Columns c0 .. c0 + nc - 1 of the activations, from the chunk's first block on.
struct QGemmCols {
  const int8_t* q = nullptr;  // Q8: column c's quants at q + c * q_stride
  const float* d = nullptr;   // Q8: column c's scales at d + c * d_stride
  const float* s = nullptr;   // Q8: column c's d * sum(q) at s + c * d_stride
  const BlockQ8_K* k = nullptr;  // Q8K: column c's blocks at k + c * k_stride
  int64_t q_stride = 0, d_stride = 0, k_stride = 0;
  const uint8_t* packed = nullptr;  // kernels with `pack`: the tile's columns in their layout
};

// Kernels whose GEMM tile reads the activations in a layout of its own: the driver
// packs each tile of gemm_cols columns (nc <= gemm_cols of them real) over the nb
// blocks of a whole row once per column block, packed_block_bytes per block, and
// passes the tile's packed copy from the chunk's first block on.
using QPackFn = void (*)(const QGemmCols& x, int64_t nb, int nc, uint8_t* out);

// w[r]: weight row r of the tile at the chunk's first block. out[r * kQGemmMaxC + c].
using QGemmFn = void (*)(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out);

struct QDotKernel {
  QTileFn tile = nullptr;
  ActKind act = ActKind::None;
  int block_elems = 0;
  size_t block_bytes = 0;
  QGemmFn gemm = nullptr;  // nullptr: the tile kernel at every batch
  int gemm_rows = 0, gemm_cols = 0;
  QPackFn pack = nullptr;
  size_t packed_block_bytes = 0;
  int gemm_min_cols = 2;  // dot_rows_quant takes the GEMM tile from this many columns on
};

// The kernel for weights of type t written for isa; nullptr when the type is not a
// quantized type or the kernel was not compiled (the compiler lacks the isa) or, for
// Amx, this CPU cannot run it.
const QDotKernel* qdot_kernel(GgmlType t, QIsa isa);
// The fastest compiled kernel for t at or below the process's kernel level cap
// (kernel_level.h, SEER_KERNEL_LEVEL); nullptr: not a quantized type.
const QDotKernel* best_qdot_kernel(GgmlType t);

// The per-file tables qdot_kernel draws from.
const QDotKernel* qdot_kernel_scalar(GgmlType t);                 // dot_quant_ref.cc
const QDotKernel* qdot_kernel_q8_0_q4_0(GgmlType t, QIsa isa);    // dot_quant.cc
const QDotKernel* qdot_kernel_q32(GgmlType t, QIsa isa);          // dot_q32.cc
const QDotKernel* qdot_kernel_kquant(GgmlType t, QIsa isa);       // dot_kquant.cc
const QDotKernel* qdot_kernel_avx512(GgmlType t);                 // dot_rows16_avx512.cc
const QDotKernel* qdot_kernel_amx(GgmlType t);                    // dot_rows16_amx.cc

}  // namespace seer
