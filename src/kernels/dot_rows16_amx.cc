// The AMX int8 GEMM tile of the 32-element types whose block is a scale and signed
// values (Q8_0, Q4_0, Q5_0, IQ4_NL), for Intel CPUs with AMX (Sapphire Rapids on). One
// TDPBSSD multiplies a tile of 16 weight rows x 32 quants (one block of each row) by
// the 32 x 16 activations of 16 columns, so the exact integer dots of a whole 16 x 16
// tile of (row, column) take one instruction; the f32 part stays the 512-bit tile's
// order, acc = fma(d_w * d_x, float(dot), acc) block after block, done for 16 columns
// at once per row. So its outputs are bit-identical to the AVX-512 entry's
// (dot_rows16_avx512.cc), whose tile kernel and narrow GEMM tile (with its packing) it reuses: a
// block's tile drain (16 conversions, products and FMAs) does not pay off below
// kAmxMinCols columns. docs/kernels-prefill.md, "AMX tiles".
//
// Linux gives a process the tile registers only after it asks (arch_prctl); amx_usable
// asks once. SEER_NO_AMX=1 in the environment keeps seer on the AVX-512 kernels (for
// comparisons on the same machine).
#include <cstdlib>
#include <cstring>

#include "kernels/rows16.h"

#if defined(SEER_QDOT_AVX512) && (defined(__AMX_TILE__) || defined(__AMXTILE__)) && \
    (defined(__AMX_INT8__) || defined(__AMXINT8__))  // GCC's and clang's spellings
#define SEER_QDOT_AMX 1
#include <cpuid.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <type_traits>
#endif

namespace seer {
namespace {

#ifdef SEER_QDOT_AMX
using rows16::kCols;
using rows16::kRows;
using rows16::AmxPackedBlock;

// Below this many columns the AVX-512 GEMM tile takes the call (bench_qdot, 2048 x 2048
// Q8_0, one thread, Xeon with AMX: AMX 31.5 / 79 / 150 GMAC/s at 4 / 8 / 16 columns,
// AVX-512 43 / 92 / 106; docs/kernels-prefill.md, "AMX tiles").
constexpr int kAmxMinCols = 16;
static_assert(kAmxMinCols == kCols, "the AMX tile reads all kCols packed columns");

bool amx_usable() {
  static const bool usable = [] {
    if (const char* off = std::getenv("SEER_NO_AMX"); off && *off && *off != '0') return false;
    unsigned a = 0, b = 0, c = 0, d = 0;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d)) return false;
    constexpr unsigned kAmxTile = 1u << 24, kAmxInt8 = 1u << 25;
    if ((d & (kAmxTile | kAmxInt8)) != (kAmxTile | kAmxInt8)) return false;
    constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
    return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
  }();
  return usable;
}

// Tiles 0 and 1: weights, 16 rows x 32 bytes (blocks b and b + 1); 2 and 3: their
// activations, 8 rows of 16 columns x 4 bytes; 4 and 5: their dots, 16 x 16 int32.
struct alignas(64) TileConfig {
  uint8_t palette, start_row, reserved[14];
  uint16_t colsb[16];
  uint8_t rows[16];
};
constexpr TileConfig kConfig{1, 0, {}, {kQK, kQK, 4 * kCols, 4 * kCols, 4 * kCols, 4 * kCols},
                             {kRows, kRows, kQK / 4, kQK / 4, kRows, kRows}};

void configure_tiles() {
  thread_local bool configured = false;
  if (configured) return;
  _tile_loadconfig(&kConfig);
  configured = true;
}

// acc[r] (16 columns) += d_w[r] * d_x * dots[r], in the 512-bit tile's order per output.
inline void scale_add(const int32_t (&dots)[kRows][kCols], __m512 dw, const float* dx, __m512 acc[kRows]) {
  alignas(64) float dws[kRows];
  _mm512_store_ps(dws, dw);
  const __m512 x = _mm512_loadu_ps(dx);
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r)
    acc[r] = _mm512_fmadd_ps(_mm512_mul_ps(_mm512_set1_ps(dws[r]), x),
                             _mm512_cvtepi32_ps(_mm512_load_si512(dots[r])), acc[r]);
}

// Block b of the 16 rows as an A tile's memory: Q8_0's quants are in the weights
// already, `stride` bytes apart; the other types are decoded into `buf`.
template <class Block>
inline const void* weight_rows(const Block* const* w, int64_t b, int64_t& stride, int8_t (&buf)[kRows][kQK]) {
  if constexpr (std::is_same_v<Block, BlockQ8_0>) {
    stride = reinterpret_cast<const char*>(w[1]) - reinterpret_cast<const char*>(w[0]);
    return w[0][b].qs;
  } else {
#pragma GCC unroll 16
    for (int r = 0; r < kRows; ++r) _mm256_store_si256(reinterpret_cast<__m256i*>(buf[r]), rows16::weights256(w[r][b]));
    asm volatile("" ::: "memory");  // the tile load's asm does not tell the compiler it reads buf
    stride = kQK;
    return buf;
  }
}

template <class Block>
void gemm_tile(const void* const* wp, int64_t nb, const QGemmCols& x, float* out) {
  configure_tiles();
  const Block* w[kRows];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) w[r] = static_cast<const Block*>(wp[r]);
  const __m512i row_offsets = rows16::row_offsets(wp);
  __m512 acc[kRows];
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) acc[r] = _mm512_setzero_ps();
  const auto* p = reinterpret_cast<const AmxPackedBlock*>(x.packed);
  const char* ahead = rows16::next_tile(wp);
  alignas(64) int8_t buf0[kRows][kQK], buf1[kRows][kQK];
  alignas(64) int32_t dots0[kRows][kCols], dots1[kRows][kCols];
  int64_t stride = 0;
  int64_t b = 0;
  // Two blocks per step in two sets of tiles, so one block's dots run on the tile unit
  // while the other's are scaled on the vector units.
  for (; b + 1 < nb; b += 2, p += 2) {
    rows16::prefetch_next_tile<Block>(ahead);
    rows16::prefetch_next_tile<Block>(ahead + kRows * sizeof(Block));
    ahead += 2 * kRows * sizeof(Block);
    _tile_loadd(0, weight_rows(w, b, stride, buf0), stride);
    _tile_loadd(2, p[0].q, 4 * kCols);
    _tile_zero(4);
    _tile_dpbssd(4, 0, 2);
    _tile_loadd(1, weight_rows(w, b + 1, stride, buf1), stride);
    _tile_loadd(3, p[1].q, 4 * kCols);
    _tile_zero(5);
    _tile_dpbssd(5, 1, 3);
    _tile_stored(4, dots0, 4 * kCols);
    scale_add(dots0, rows16::scales16(&w[0][b].d, row_offsets, 0xffff), p[0].d, acc);
    _tile_stored(5, dots1, 4 * kCols);
    scale_add(dots1, rows16::scales16(&w[0][b + 1].d, row_offsets, 0xffff), p[1].d, acc);
  }
  if (b < nb) {
    _tile_loadd(0, weight_rows(w, b, stride, buf0), stride);
    _tile_loadd(2, p[0].q, 4 * kCols);
    _tile_zero(4);
    _tile_dpbssd(4, 0, 2);
    _tile_stored(4, dots0, 4 * kCols);
    scale_add(dots0, rows16::scales16(&w[0][b].d, row_offsets, 0xffff), p[0].d, acc);
  }
#pragma GCC unroll 16
  for (int r = 0; r < kRows; ++r) _mm512_storeu_ps(out + r * kQGemmMaxC, acc[r]);
}

// A full tile's columns in the AMX layout; the others as the 512-bit tile takes them.
template <GgmlType T>
void pack_cols(const QGemmCols& x, int64_t nb, int nc, uint8_t* out) {
  if (nc < kAmxMinCols) return qdot_kernel_avx512(T)->pack(x, nb, nc, out);
  auto* p = reinterpret_cast<AmxPackedBlock*>(out);
  for (int64_t b = 0; b < nb; ++b, ++p)
    for (int c = 0; c < kCols; ++c) {
      const int8_t* q = x.q + c * x.q_stride + b * kQK;
      for (int j = 0; j < kQK / 4; ++j) std::memcpy(&p->q[j][c], q + 4 * j, 4);
      p->d[c] = x.d[c * x.d_stride + b];
    }
}

template <class Block, GgmlType T>
void gemm_n(const void* const* w, int64_t nb, const QGemmCols& x, int nc, float* out) {
  if (nc < kAmxMinCols) return qdot_kernel_avx512(T)->gemm(w, nb, x, nc, out);
  gemm_tile<Block>(w, nb, x, out);
}

template <class Block, GgmlType T>
const QDotKernel* kernel() {
  static const QDotKernel k = [] {
    QDotKernel amx = *qdot_kernel_avx512(T);
    amx.gemm = &gemm_n<Block, T>;
    amx.pack = &pack_cols<T>;
    return amx;
  }();
  return &k;
}
#endif

}  // namespace

const QDotKernel* qdot_kernel_amx(GgmlType t) {
#ifdef SEER_QDOT_AMX
  if (!amx_usable()) return nullptr;
  if (t == GgmlType::Q8_0) return kernel<BlockQ8_0, GgmlType::Q8_0>();
  if (t == GgmlType::Q4_0) return kernel<BlockQ4_0, GgmlType::Q4_0>();
  if (t == GgmlType::Q5_0) return kernel<BlockQ5_0, GgmlType::Q5_0>();
  if (t == GgmlType::IQ4_NL) return kernel<BlockIQ4_NL, GgmlType::IQ4_NL>();
#endif
  (void)t;
  return nullptr;
}

}  // namespace seer
