#include "kernels/matmul.h"

#include <cblas.h>

#include <algorithm>

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

int64_t MatmulContext::gemm_min_batch(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 8;
    case GgmlType::F16:
    case GgmlType::BF16: return 16;
    default: return 32;
  }
}

bool MatmulContext::use_gemm(GgmlType t, int64_t n) const {
  if (forced_ == MatmulPath::Dot) return false;
  if (forced_ == MatmulPath::Gemm) return true;
  return n >= gemm_min_batch(t);
}

void MatmulContext::prepare_activations(const float* x, int64_t n, int64_t k, bool need_q8, bool need_rounded) {
  if (!need_q8) return;
  if (k % kQK != 0) fail("quantized matmul needs a multiple of {} columns, got {}", kQK, k);
  const size_t elems = static_cast<size_t>(n * k);
  if (xq_.size() < elems) xq_.resize(elems);
  if (xd_.size() < elems / kQK) xd_.resize(elems / kQK);
  if (need_rounded && xrounded_.size() < elems) xrounded_.resize(elems);
  auto quantize = [&](int64_t r) {
    quantize_act_q8(x + r * k, k, xq_.data() + r * k, xd_.data() + r * (k / kQK));
    if (need_rounded) dequantize_act_q8(xq_.data() + r * k, xd_.data() + r * (k / kQK), k, xrounded_.data() + r * k);
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
  const float* xa = is_quantized(w.type) ? xrounded_.data() : x;
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<int>(n), static_cast<int>(rows),
              static_cast<int>(k), 1.0f, xa, static_cast<int>(k), wt, static_cast<int>(k), 0.0f, t.y + r0,
              static_cast<int>(w.rows));
}

void MatmulContext::run(const float* x, int64_t n, int64_t k, std::span<const MatmulTarget> targets) {
  if (n <= 0 || targets.empty()) return;
  bool need_q8 = false, need_rounded = false;
  int64_t total_rows = 0;
  for (const auto& t : targets) {
    if (t.w->cols != k) fail("matmul: tensor '{}' has {} columns, activations have {}", t.w->name, t.w->cols, k);
    total_rows += t.w->rows;
    if (is_quantized(t.w->type)) {
      need_q8 = true;
      need_rounded = need_rounded || use_gemm(t.w->type, n);
    }
  }
  prepare_activations(x, n, k, need_q8, need_rounded);

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
      dot_rows_quant(*t.w, task.r0, task.r1, xq_.data(), xd_.data(), n, t.y, t.w->rows);
    } else {
      dot_rows_float(*t.w, task.r0, task.r1, x, n, t.y, t.w->rows);
    }
  });
}

}  // namespace seer
