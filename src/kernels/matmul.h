#pragma once
// y = x . W^T for activations x (n x k, f32) and a weight matrix W (m x k) of any
// computable type, on the thread pool, split over output rows.
//
// Two paths, chosen by batch size n (thresholds measured with bench_forward, see
// gemm_min_batch):
//  * dot: each weight row is streamed once and dotted with all n activation rows
//    (memory-bound decode); quantized weights use integer dots against Q8 or
//    Q8_K activations (activation_kind in dot_kernels.h, kernels in qdot.h). Each
//    output's summation order is fixed (k in chunks of a fixed size), so a token
//    gets bit-identical results alone or in any batch below the gemm threshold.
//  * gemm: tiles of weight rows are widened to f32 and multiplied by OpenBLAS sgemm
//    (compute-bound prefill). For quantized weights the activations are first rounded
//    through Q8 / Q8_K exactly as the dot path sees them, so both paths compute with the
//    same values (results differ by f32 summation order only; later layers can then
//    round an activation differently, so quantized models agree across batch shapes
//    only to about 1e-2 in the logits).
#include <cstdint>
#include <limits>
#include <span>
#include <vector>

#include "kernels/thread_pool.h"
#include "model/model_file.h"
#include "model/quant_blocks.h"

namespace seer {

struct MatmulTarget {
  const WeightTensor* w = nullptr;
  float* y = nullptr;  // n x w->rows, row-major
};

enum class MatmulPath { Auto, Dot, Gemm };

class MatmulContext {
 public:
  // Sets OpenBLAS to one thread: parallelism comes from splitting rows on `pool`.
  explicit MatmulContext(ThreadPool& pool);

  ThreadPool& pool() { return pool_; }

  // Every target's weight must have `k` columns. Several targets in one call share
  // one parallel region (e.g. Q, K and V), which balances better than three.
  void run(const float* x, int64_t n, int64_t k, std::span<const MatmulTarget> targets);
  void run(const float* x, int64_t n, const WeightTensor& w, float* y) {
    MatmulTarget t{&w, y};
    run(x, n, w.cols, std::span<const MatmulTarget>(&t, 1));
  }

  // Tests and benchmarks force a path; Auto picks by batch size.
  void set_path(MatmulPath p) { forced_ = p; }
  // Smallest batch for which the gemm path is used with weights of type t;
  // kNeverGemm where the dot path is used at every batch.
  static int64_t gemm_min_batch(GgmlType t);
  static constexpr int64_t kNeverGemm = std::numeric_limits<int64_t>::max();

 private:
  struct Task {
    int target;
    int64_t r0, r1;
    bool gemm;
  };
  // Activation forms one call needs, per ActKind (dot_kernels.h): quantized for the
  // dot path, quantized and widened back for the gemm path.
  struct ActNeeds {
    bool q8 = false, q8k = false, q8_rounded = false, q8k_rounded = false;
  };
  bool use_gemm(GgmlType t, int64_t n) const;
  void prepare_activations(const float* x, int64_t n, int64_t k, const ActNeeds& needs);
  void run_gemm_tile(const float* x, int64_t n, int64_t k, const MatmulTarget& t, int64_t r0, int64_t r1, int thread);

  ThreadPool& pool_;
  MatmulPath forced_ = MatmulPath::Auto;
  std::vector<Task> tasks_;
  std::vector<int8_t> xq_;       // Q8: n x k quantized activations
  std::vector<float> xd_;        // Q8: n x k/32 scales
  std::vector<float> xs_;        // Q8: n x k/32 scale * sum of the block's quants
  std::vector<BlockQ8_K> xk_;    // Q8K: n x k/256 blocks
  std::vector<float> xrounded_;   // n x k: Q8 activations widened, for the gemm path
  std::vector<float> xrounded_k_; // n x k: Q8K activations widened, for the gemm path
  std::vector<std::vector<float>> tiles_;  // per thread: f32 weight tile
};

}  // namespace seer
