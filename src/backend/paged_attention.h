#pragma once
// Multi-token causal attention over paged K/V (docs/architecture.md §1.3): each batch token attends
// to positions 0..pos of its own sequence through that sequence's block table, with
// grouped-query attention (n_heads / n_kv_heads query heads share a KV head).
// f16/bf16/q8_0 K/V are widened to f32 in registers; scores and sums are f32.
#include <cstdint>
#include <vector>

#include "backend/forward_batch.h"
#include "backend/paged_kv_storage.h"
#include "kernels/thread_pool.h"

namespace seer {

class PagedAttention {
 public:
  // scale: multiplies q.k (0: 1/sqrt(head_dim)); softcap > 0: scores become
  // softcap * tanh(score / softcap) before the softmax (Gemma 2).
  PagedAttention(int n_heads, int n_kv_heads, int head_dim, int threads, float scale = 0.0f, float softcap = 0.0f);

  // q, out: batch.size() x (n_heads * head_dim). K/V of every batch token must
  // already be in `kv` for this layer. window > 0: a token at position p attends
  // only to positions p - window + 1 .. p (sliding-window layers); blocks wholly
  // before every query's window are not read.
  void run(ThreadPool& pool, const ForwardBatch& batch, const PagedKvStorage& kv, int layer, const float* q,
           float* out, int window = 0);

 private:
  struct Tile {  // consecutive batch tokens of one sequence, at consecutive positions
    int32_t first, count;
  };
  template <class E>
  void run_items(ThreadPool& pool, const ForwardBatch& batch, const PagedKvStorage& kv, int layer, const float* q,
                 float* out, int window);
  template <class E>  // E: the K/V element type
  void run_item(const ForwardBatch& batch, const PagedKvStorage& kv, int layer, const float* q, float* out,
                const Tile& tile, int kv_head, int thread, int window);

  int n_heads_, n_kv_heads_, head_dim_, group_;
  float scale_, softcap_;
  std::vector<Tile> tiles_;
  std::vector<std::vector<float>> scores_;  // per thread
};

}  // namespace seer
