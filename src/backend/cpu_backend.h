#pragma once
// The CPU backend: Llama-block forward passes over flat batches with paged K/V
// (backend.h has the contract). Linear layers run as GEMMs over the whole batch
// (kernels/matmul.h); attention reads K/V through each sequence's block table.
#include <condition_variable>
#include <memory>
#include <vector>

#include "backend/backend.h"
#include "backend/moe_ffn.h"
#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"
#include "common/thread_annotations.h"
#include "kernels/matmul.h"
#include "kernels/ops.h"
#include "kernels/thread_pool.h"
#include "model/model_file.h"

namespace seer {

// Weights are referenced, not copied: `weights` (and the file it maps) must outlive
// the backend.
std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& config, const ModelWeights& weights,
                                          const CpuBackendOptions& opts);

class CpuBackend final : public Backend {
 public:
  CpuBackend(const ModelConfig& config, const ModelWeights& weights, const CpuBackendOptions& opts);

  std::string name() const override { return "cpu"; }
  int vocab_size() const override { return config_.vocab_size; }
  int block_size() const override { return kv_.shape().block_size; }
  int device_blocks() const override { return kv_.device_blocks(); }
  int host_blocks() const override { return kv_.host_blocks(); }
  size_t kv_bytes_per_token() const override { return kv_.bytes_per_token(); }

  void forward(const ForwardBatch& batch, std::vector<float>& logits) override;
  // With pipeline_kv_ops, a copier thread runs the ops layer by layer while the
  // layers compute; layer l waits only until the ops' layer-l parts are done.
  void forward_after(std::span<const KvOp> ops, const ForwardBatch& batch, std::vector<float>& logits) override;

  void copy_device_block(int32_t src, int32_t dst) override { kv_.copy_device_block(src, dst); }
  void swap_out(int32_t device_block, int32_t host_block) override { kv_.swap_out(device_block, host_block); }
  void swap_in(int32_t host_block, int32_t device_block) override { kv_.swap_in(host_block, device_block); }
  size_t kv_block_bytes() const override { return kv_.block_bytes(); }
  KvConfig kv_config() const override;
  void read_kv_block(bool host, int32_t block, void* dst) const override { kv_.read_block(host, block, dst); }
  void write_host_kv_block(int32_t block, const void* src) override { kv_.write_host_block(block, src); }

  const ModelConfig& config() const { return config_; }
  int threads() const { return pool_.size(); }
  // Tests and benchmarks force the matmul path and fill the KV pool directly.
  MatmulContext& matmul() { return matmul_; }
  PagedKvStorage& kv_storage() { return kv_; }

  // Wall time per phase of forward(), accumulated while profiling is on (bench_forward
  // reports where the time goes).
  struct Profile {
    double embed = 0, norm_rope_kv = 0, qkv = 0, attention = 0, wo = 0, ffn_up_gate = 0, ffn_down = 0, logits = 0;
    double kv_wait = 0;  // layers waiting for their K/V from forward_after's copies
    double total() const {
      return embed + norm_rope_kv + qkv + attention + wo + ffn_up_gate + ffn_down + logits + kv_wait;
    }
  };
  void set_profiling(bool on) { profiling_ = on; }
  const Profile& profile() const { return profile_; }
  void reset_profile() { profile_ = {}; }

 private:
  void check_batch(const ForwardBatch& batch) const;
  void resize_scratch(int64_t n);
  void layer(const ForwardBatch& batch, int l);
  // gate/up, activation and down of a dense FFN: xn_ -> tmp_.
  void dense_ffn(const LayerWeights& w, int64_t n);
  // The layers of forward(); each first waits for its K/V when a copier runs.
  void layers(const ForwardBatch& batch);
  void wait_for_layer(int l);
  // Runs fn(row) for rows [0, n) on the pool when the batch is large enough to pay.
  template <class F>
  void rows(int64_t n, F&& fn);

  ModelConfig config_;
  ModelWeights weights_;
  ThreadPool pool_;
  MatmulContext matmul_;
  PagedKvStorage kv_;
  PagedAttention attention_;
  Rope rope_;
  Rope rope_local_;
  std::unique_ptr<MoeFfn> moe_;  // when the model's FFNs are mixtures of experts  // sliding-window layers (their own base when the model has one)
  // Biases (qwen2) widened to f32 once.
  std::vector<std::vector<float>> bq_, bk_, bv_;

  bool profiling_ = false;
  Profile profile_;

  // forward_after's copier: the number of layers whose K/V ops are done; -1 when no
  // copier runs (every layer is ready).
  bool pipeline_kv_ops_ = true;
  Mutex ready_mutex_;
  std::condition_variable ready_cv_;
  int layers_ready_ GUARDED_BY(ready_mutex_) = -1;

  // Activations of the current batch.
  std::vector<float> x_, xn_, q_, k_, v_, att_, tmp_, gate_, up_, cos_, sin_, cos_local_, sin_local_,
      out_rows_;
};

}  // namespace seer
