// Quantized weight rows against int8 activations (dot_kernels.h): the row driver and
// the one dispatch place for every quantized type (qdot.h tables), plus the Q8_0/Q4_0
// SIMD tiles, as llama.cpp's AVX2 vec_dot: |w| (u8) times sign(w)*x (s8) with
// maddubs; with VNNI, one dpbusd of (x + 128) as u8 against w started from
// -128 * sum(w), which needs no per-pair sign fix-up.
#include <algorithm>
#include <vector>

#include "common/error.h"
#include "kernels/dot_kernels.h"
#include "kernels/kernel_level.h"
#include "kernels/qdot.h"
#include "kernels/qdot_simd.h"
#include "model/quant.h"

namespace seer {
namespace {

#ifdef SEER_QDOT_AVX2
using namespace qsimd;

inline __m256i load_weights(const BlockQ8_0& b) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b.qs));
}
inline __m256i load_weights(const BlockQ4_0& b) { return _mm256_sub_epi8(nibbles32(b.qs), _mm256_set1_epi8(8)); }

// One weight block prepared for the dot products with every column of a tile.
struct WeightBlock {
  __m256i w;    // the 32 weights (s8)
  __m256i aux;  // VNNI: -128 * (sums of 4 weights), the start value; else |w|
  float d;      // block scale
};

template <bool V, class Block>
inline WeightBlock prepare(const Block& b) {
  WeightBlock p;
  p.w = load_weights(b);
  if constexpr (V)
    p.aux = _mm256_sub_epi32(_mm256_setzero_si256(), dot_u8s8<V>(_mm256_setzero_si256(), _mm256_set1_epi8(-128), p.w));
  else
    p.aux = _mm256_sign_epi8(p.w, p.w);
  p.d = fp16(b.d);
  return p;
}

// 8 int32 partial sums of w[i] * x[i] over the 32 lanes (exact). With VNNI:
// (x + 128) . w - 128 * sum(w) in one dpbusd; else |w| . sign(x, w) as llama.cpp.
template <bool V>
inline __m256i block_dot(const WeightBlock& w, const int8_t* xq) {
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xq));
  if constexpr (V) return dot_u8s8<V>(w.aux, _mm256_xor_si256(x, _mm256_set1_epi8(-128)), w.w);
  return _mm256_madd_epi16(_mm256_maddubs_epi16(w.aux, _mm256_sign_epi8(x, w.w)), _mm256_set1_epi16(1));
}

// out[c] = w . x[c] over nb blocks for one weight row and C columns: each weight
// block is loaded and prepared once. One accumulator per column.
template <class Block, bool V, int C>
void tile(const Block* w, int64_t nb, const QActCols& x, float* out) {
  __m256 acc[C];
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) acc[c] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    prefetch_ahead<sizeof(Block)>(w + b);
    const WeightBlock wb = prepare<V>(w[b]);
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) {
      const __m256 p = _mm256_cvtepi32_ps(block_dot<V>(wb, x.q[c] + b * kQK));
      acc[c] = _mm256_fmadd_ps(_mm256_set1_ps(wb.d * x.d[c][b]), p, acc[c]);
    }
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) out[c] = simd::hsum(acc[c]);
}

template <class Block, bool V>
void tile_n(const void* w, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* b = static_cast<const Block*>(w);
  switch (nc) {
    case 4: return tile<Block, V, 4>(b, nb, x, out);
    case 3: return tile<Block, V, 3>(b, nb, x, out);
    case 2: return tile<Block, V, 2>(b, nb, x, out);
    default: return tile<Block, V, 1>(b, nb, x, out);
  }
}

template <class Block, bool V>
constexpr QDotKernel kKernel{&tile_n<Block, V>, ActKind::Q8, kQK, sizeof(Block)};
#endif

// Each output is summed over k in fixed chunks of kChunkElems (as dot_rows in
// dot_float.cc), each chunk's partial added in order to an accumulator that starts at
// 0, so its value does not depend on how many columns the batch has. One weight row
// at a time (row_group in dot_kernels.h says why), streamed start to end. 4096, not
// 1024: each chunk ends in a horizontal sum per (row, column), and on llama-1b longer
// chunks made Q8_0 / Q4_K_M pp512 48.6 / 79.9 -> 52.2 / 88.5 tok/s and Q4_K_M decode
// 23.7 -> 26.1 (docs/kernels-prefill.md, "Prefetching the weight stream").
constexpr int64_t kChunkElems = 4096;

// The activation pointers of every (k chunk, column group), set once for all the rows
// of a call: at batch 1 a row of a small model is a few blocks, so per-row set-up
// showed in decode profiles.
void set_act_cols(const QDotKernel& kern, const QuantActs& a, int64_t k, int64_t n, std::vector<QActCols>& cols) {
  const int64_t nb = k / kern.block_elems;
  const int64_t chunk = kChunkElems / kern.block_elems;
  cols.clear();
  for (int64_t b0 = 0; b0 < nb; b0 += chunk)
    for (int64_t c0 = 0; c0 < n; c0 += kQMaxC) {
      QActCols& g = cols.emplace_back();
      for (int64_t col = c0; col < std::min(n, c0 + kQMaxC); ++col) {
        const int c = static_cast<int>(col - c0);
        if (kern.act == ActKind::Q8) {
          g.q[c] = a.q8 + col * k + b0 * kQK;
          g.d[c] = a.d8 + col * nb + b0;
          g.s[c] = a.s8 + col * nb + b0;
        } else {
          g.k[c] = a.q8k + col * nb + b0;
        }
      }
    }
}

void qdot_rows(const QDotKernel& kern, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a, int64_t n,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kern.block_elems;
  const int64_t chunk = kChunkElems / kern.block_elems;
  const size_t row_bytes = static_cast<size_t>(nb) * kern.block_bytes;
  const auto* base = static_cast<const uint8_t*>(w.data);
  thread_local std::vector<QActCols> cols;  // per pool thread, reused across calls
  thread_local std::vector<float> acc;
  set_act_cols(kern, a, w.cols, n, cols);
  acc.resize(static_cast<size_t>(n));
  for (int64_t r = r0; r < r1; ++r) {
    const uint8_t* row = base + static_cast<size_t>(r) * row_bytes;
    std::fill(acc.begin(), acc.end(), 0.0f);
    const QActCols* g = cols.data();
    for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
      const int64_t bc = std::min(chunk, nb - b0);
      for (int64_t c0 = 0; c0 < n; c0 += kQMaxC, ++g) {
        const int nc = static_cast<int>(std::min<int64_t>(kQMaxC, n - c0));
        float out[kQMaxC];
        kern.tile(row + static_cast<size_t>(b0) * kern.block_bytes, bc, *g, nc, out);
        for (int c = 0; c < nc; ++c) acc[static_cast<size_t>(c0 + c)] += out[c];
      }
    }
    for (int64_t c = 0; c < n; ++c) y[c * ldy + r] = acc[static_cast<size_t>(c)];
  }
}

// The GEMM driver: rows in groups of gemm_rows, columns in tiles of gemm_cols, k in the
// chunks of qdot_rows, each chunk's partial added in the same order to an accumulator
// that starts at 0, so every output gets the bits qdot_rows gives it. The group's
// weight rows stay in L1 while the columns stream past. Rows left over (fewer than
// gemm_rows) go through qdot_rows.
// Columns per block: the block's activations stay in L2 while the task's weight rows
// pass (bench_qdot, 768 x 3072, n = 512: Q8_0 47 GMAC/s with 32-64, 42 unblocked, 30 with 16).
constexpr int64_t kGemmColBlock = kQGemmMaxC;  // 64; a K-quant GEMM call takes a whole block

void qgemm_rows(const QDotKernel& kern, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a, int64_t n,
                float* y, int64_t ldy) {
  const int64_t k = w.cols;
  const int64_t nb = k / kern.block_elems;
  const int64_t chunk = kChunkElems / kern.block_elems;
  const auto* base = static_cast<const uint8_t*>(w.data);
  const size_t row_bytes = static_cast<size_t>(nb) * kern.block_bytes;
  const int R = kern.gemm_rows, C = kern.gemm_cols;
  const int64_t r_end = r0 + (r1 - r0) / R * R;
  auto columns = [&](int64_t c0, int64_t b0) {
    QGemmCols cols;
    if (kern.act == ActKind::Q8) {
      cols.q = a.q8 + c0 * k + b0 * kQK;
      cols.q_stride = k;
      cols.d = a.d8 + c0 * nb + b0;
      cols.s = a.s8 + c0 * nb + b0;
      cols.d_stride = nb;
    } else {
      cols.k = a.q8k + c0 * nb + b0;
      cols.k_stride = nb;
    }
    return cols;
  };
  thread_local std::vector<uint8_t> packed;  // per pool thread: the column block in the kernel's layout
  for (int64_t cb = 0; cb < n; cb += kGemmColBlock) {
    const int64_t cb_end = std::min(n, cb + kGemmColBlock);
    const size_t tile_bytes = static_cast<size_t>(nb) * kern.packed_block_bytes;
    if (kern.pack && r_end > r0) {
      packed.resize(static_cast<size_t>((cb_end - cb + C - 1) / C) * tile_bytes);
      for (int64_t c0 = cb; c0 < cb_end; c0 += C)
        kern.pack(columns(c0, 0), nb, static_cast<int>(std::min<int64_t>(C, cb_end - c0)),
                  packed.data() + (c0 - cb) / C * tile_bytes);
    }
    for (int64_t r = r0; r < r_end; r += R) {
      for (int64_t c0 = cb; c0 < cb_end; c0 += C) {
        const int nc = static_cast<int>(std::min<int64_t>(C, cb_end - c0));
        float acc[kQGemmMaxR * kQGemmMaxC];
        for (int i = 0; i < R; ++i) std::fill_n(acc + i * kQGemmMaxC, nc, 0.0f);
        for (int64_t b0 = 0; b0 < nb; b0 += chunk) {
          const int64_t bc = std::min(chunk, nb - b0);
          const void* rows[kQGemmMaxR];
          for (int i = 0; i < R; ++i) rows[i] = base + (r + i) * row_bytes + b0 * kern.block_bytes;
          QGemmCols cols = columns(c0, b0);
          if (kern.pack) cols.packed = packed.data() + (c0 - cb) / C * tile_bytes + b0 * kern.packed_block_bytes;
          float out[kQGemmMaxR * kQGemmMaxC];
          kern.gemm(rows, bc, cols, nc, out);
          for (int i = 0; i < R; ++i)
            for (int c = 0; c < nc; ++c) acc[i * kQGemmMaxC + c] += out[i * kQGemmMaxC + c];
        }
        for (int c = 0; c < nc; ++c)
          for (int i = 0; i < R; ++i) y[(c0 + c) * ldy + r + i] = acc[i * kQGemmMaxC + c];
      }
    }
  }
  if (r_end < r1) qdot_rows(kern, w, r_end, r1, a, n, y, ldy);
}

}  // namespace

const char* qisa_name(QIsa isa) {
  switch (isa) {
    case QIsa::Scalar: return "scalar";
    case QIsa::Avx2: return "avx2";
    case QIsa::Vnni: return "vnni";
    case QIsa::Avx512: return "avx512";
    case QIsa::Amx: return "amx";
  }
  return "?";
}

const QDotKernel* qdot_kernel_q8_0_q4_0(GgmlType t, QIsa isa) {
#ifdef SEER_QDOT_AVX2
  const bool q8 = t == GgmlType::Q8_0;
  if (!q8 && t != GgmlType::Q4_0) return nullptr;
  if (isa == QIsa::Avx2) return q8 ? &kKernel<BlockQ8_0, false> : &kKernel<BlockQ4_0, false>;
#ifdef SEER_QDOT_VNNI
  if (isa == QIsa::Vnni) return q8 ? &kKernel<BlockQ8_0, true> : &kKernel<BlockQ4_0, true>;
#endif
#endif
  (void)t;
  (void)isa;
  return nullptr;
}

const QDotKernel* qdot_kernel(GgmlType t, QIsa isa) {
  if (isa == QIsa::Scalar) return qdot_kernel_scalar(t);
  if (isa == QIsa::Avx512) return qdot_kernel_avx512(t);
  if (isa == QIsa::Amx) return qdot_kernel_amx(t);
  if (const QDotKernel* k = qdot_kernel_q8_0_q4_0(t, isa)) return k;
  if (const QDotKernel* k = qdot_kernel_q32(t, isa)) return k;
  return qdot_kernel_kquant(t, isa);
}

const QDotKernel* best_qdot_kernel(GgmlType t) {
  const QIsa cap = kernel_level_cap();
  for (QIsa isa : {QIsa::Amx, QIsa::Avx512, QIsa::Vnni, QIsa::Avx2, QIsa::Scalar})
    if (isa <= cap)
      if (const QDotKernel* k = qdot_kernel(t, isa)) return k;
  return nullptr;
}

ActKind activation_kind(GgmlType t) {
  const QDotKernel* k = best_qdot_kernel(t);
  return k ? k->act : ActKind::None;
}

void dot_rows_quant(const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a, int64_t n, float* y,
                    int64_t ldy) {
  const QDotKernel* k = best_qdot_kernel(w.type);
  if (!k) fail("dot_rows_quant: tensor '{}' has type {}", w.name, ggml_type_name(w.type));
  if (k->gemm && n >= k->gemm_min_cols)
    qgemm_rows(*k, w, r0, r1, a, n, y, ldy);
  else
    qdot_rows(*k, w, r0, r1, a, n, y, ldy);
}

void gemm_rows_quant_with(const QDotKernel& k, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a,
                          int64_t n, float* y, int64_t ldy) {
  if (!k.gemm) fail("gemm_rows_quant_with: the {} kernel has no GEMM tile", ggml_type_name(w.type));
  qgemm_rows(k, w, r0, r1, a, n, y, ldy);
}

void dot_rows_quant_with(const QDotKernel& k, const WeightTensor& w, int64_t r0, int64_t r1, const QuantActs& a,
                         int64_t n, float* y, int64_t ldy) {
  qdot_rows(k, w, r0, r1, a, n, y, ldy);
}

}  // namespace seer
