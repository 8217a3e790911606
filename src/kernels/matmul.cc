#include "kernels/matmul.h"

#include <cblas.h>

#include <algorithm>
#include <limits>

#include "common/error.h"
#include "kernels/convert.h"
#include "kernels/dot_kernels.h"
#include "kernels/quantize_act.h"
#include "model/quant.h"

namespace seer {
namespace {

int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

MatmulContext::MatmulContext(ThreadPool& pool) : pool_(pool), tiles_(pool.size()) {
  openblas_set_num_threads(1);
}

// Quantized weights stay on the integer dot path up to 63 columns (decode batches
// of 32 included); measured in docs/kernels.md ("Where the gemm path starts"): on
// this machine the dot path beat the widened-tile sgemm path at every n from 16 to
// 128 for Q8_0, Q4_K and Q6_K, and on the AMD machine on 2026-11-24 batch 32 on the
// gemm path already decoded fewer tokens/s than batch 8 on the dot path.
int64_t MatmulContext::gemm_min_batch(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 8;
    case GgmlType::F16:
    case GgmlType::BF16: return 16;
    default:
#if defined(__AVX512VNNI__) || defined(__AVXVNNI__)
      // Quantized weights with VNNI: the integer dot kernels beat widening tiles into
      // sgemm at every batch, prefill included (llama-125m, 2 threads, pp512: Q8_0
      // 503 vs 327 tok/s, Q4_K_M 625 vs 316; docs/kernels-prefill.md).
      return kNeverGemm;
#else
      return 64;
#endif
  }
}

bool MatmulContext::use_gemm(GgmlType t, int64_t n) const {
  if (forced_ == MatmulPath::Dot) return false;
  if (forced_ == MatmulPath::Gemm) return true;
  return n >= gemm_min_batch(t);
}

void MatmulContext::prepare_activations(const float* x, int64_t n, int64_t k, const ActNeeds& needs) {
  if (!needs.q8 && !needs.q8k) return;
  const int64_t block = needs.q8k ? kQK_K : kQK;
  if (k % block != 0) fail("quantized matmul needs a multiple of {} columns, got {}", block, k);
  const size_t elems = static_cast<size_t>(n * k);
  if (needs.q8) {
    if (xq_.size() < elems) xq_.resize(elems);
    if (xd_.size() < elems / kQK) xd_.resize(elems / kQK);
    if (xs_.size() < elems / kQK) xs_.resize(elems / kQK);
    if (needs.q8_rounded && xrounded_.size() < elems) xrounded_.resize(elems);
  }
  if (needs.q8k) {
    if (xk_.size() < elems / kQK_K) xk_.resize(elems / kQK_K);
    if (needs.q8k_rounded && xrounded_k_.size() < elems) xrounded_k_.resize(elems);
  }
  auto quantize = [&](int64_t r) {
    if (needs.q8) {
      int8_t* q = xq_.data() + r * k;
      float* d = xd_.data() + r * (k / kQK);
      quantize_act_q8(x + r * k, k, q, d, xs_.data() + r * (k / kQK));
      if (needs.q8_rounded) dequantize_act_q8(q, d, k, xrounded_.data() + r * k);
    }
    if (needs.q8k) {
      BlockQ8_K* b = xk_.data() + r * (k / kQK_K);
      quantize_act_q8k(x + r * k, k, b);
      if (needs.q8k_rounded) dequantize_act_q8k(b, k, xrounded_k_.data() + r * k);
    }
  };
  if (n < 8) {
    for (int64_t r = 0; r < n; ++r) quantize(r);
  } else {
    pool_.parallel_for(n, [&](int64_t r, int) { quantize(r); });
  }
}

void MatmulContext::run_gemm_tile(const float* x, int64_t n, int64_t k, const MatmulTarget& t, int64_t r0,
                                  int64_t r1, int thread) {
  const WeightTensor& w = *t.w;
  const int64_t rows = r1 - r0;
  const float* wt;
  if (w.type == GgmlType::F32) {
    wt = static_cast<const float*>(w.data) + r0 * k;
  } else {
    auto& tile = tiles_[thread];
    if (tile.size() < static_cast<size_t>(rows * k)) tile.resize(static_cast<size_t>(rows * k));
    weight_rows_to_f32(w, r0, r1, tile.data());
    wt = tile.data();
  }
  const ActKind act = activation_kind(w.type);
  const float* xa = act == ActKind::Q8 ? xrounded_.data() : act == ActKind::Q8K ? xrounded_k_.data() : x;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(rows),
              static_cast<int>(k), 1.0f, xa, static_cast<int>(k), wt, static_cast<int>(k), 0.0f, t.y + r0,
              static_cast<int>(w.rows));
}

void MatmulContext::run(const float* x, int64_t n, int64_t k, std::span<const MatmulTarget> targets) {
  if (n <= 0 || targets.empty()) return;
  ActNeeds needs;
  int64_t total_rows = 0;
  for (const auto& t : targets) {
    if (t.w->cols != k) fail("matmul: tensor '{}' has {} columns, activations have {}", t.w->name, t.w->cols, k);
    total_rows += t.w->rows;
    const ActKind act = activation_kind(t.w->type);
    const bool gemm = use_gemm(t.w->type, n);
    if (act == ActKind::Q8) {
      needs.q8 = true;
      needs.q8_rounded = needs.q8_rounded || gemm;
    } else if (act == ActKind::Q8K) {
      needs.q8k = true;
      needs.q8k_rounded = needs.q8k_rounded || gemm;
    }
  }
  prepare_activations(x, n, k, needs);
  QuantActs acts;
  acts.q8 = xq_.data();
  acts.d8 = xd_.data();
  acts.s8 = xs_.data();
  acts.q8k = xk_.data();

  // Row ranges: several per thread so that a thread slowed by other load on the
  // machine takes fewer; gemm tiles large enough to amortize OpenBLAS's packing of x.
  const int threads = pool_.size();
  tasks_.clear();
  for (int i = 0; i < static_cast<int>(targets.size()); ++i) {
    const WeightTensor& w = *targets[i].w;
    const bool gemm = use_gemm(w.type, n);
    int64_t rows_per_task;
    if (gemm) {
      const int64_t per_thread = ceil_div(total_rows, threads);
      rows_per_task = std::clamp<int64_t>(ceil_div(per_thread, 2), 64, 512);
    } else {
      rows_per_task = std::max<int64_t>(16, ceil_div(total_rows, threads * 8));
    }
    rows_per_task = ceil_div(rows_per_task, 16) * 16;
    for (int64_t r0 = 0; r0 < w.rows; r0 += rows_per_task) tasks_.push_back({i, r0, std::min(w.rows, r0 + rows_per_task), gemm});
  }

  pool_.parallel_for(static_cast<int64_t>(tasks_.size()), [&](int64_t ti, int thread) {
    const Task& task = tasks_[ti];
    const MatmulTarget& t = targets[task.target];
    if (task.gemm) {
      run_gemm_tile(x, n, k, t, task.r0, task.r1, thread);
    } else if (is_quantized(t.w->type)) {
      dot_rows_quant(*t.w, task.r0, task.r1, acts, n, t.y, t.w->rows);
    } else {
      dot_rows_float(*t.w, task.r0, task.r1, x, n, t.y, t.w->rows);
    }
  });
}

}  // namespace seer
