#pragma once
// A compute backend runs forward passes and owns the KV block storage of both tiers
// (device and host). The CPU backend is the first; a CUDA backend will sit behind the
// same interface.
//
// Semantics of forward(): for every layer, the K/V of every batch token are first
// written into its slot (block table + position), then each token attends causally
// to all positions <= its own position in its sequence. Positions below a token's
// own that are not written in this batch must hold K/V from earlier passes.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "backend/forward_batch.h"
#include "kv/kv_layer_groups.h"
#include "kv/kv_manager.h"
#include "kv/kv_types.h"
#include "model/kv_type.h"

namespace seer {

class ModelFile;

struct KvStorageConfig {
  int block_size = 16;    // tokens per block
  int device_blocks = 0;  // 0: derive from device_bytes
  size_t device_bytes = 0;  // used when device_blocks == 0; both 0: one full context
  int host_blocks = 0;
  // Element type of stored K/V (--kv-type). f16 halves the K/V memory traffic of
  // attention and doubles the pool's tokens; docs/kernels.md has the measurements
  // and the tolerances against f32.
  KvType type = kDefaultKvType;
  // Which layers share a block (kv/kv_layer_groups.h); empty: one group of every layer.
  // Block tables then hold groups() entries per logical block.
  KvLayerGroups layer_groups{};
};

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string name() const = 0;
  virtual int vocab_size() const = 0;
  virtual int block_size() const = 0;
  virtual int device_blocks() const = 0;
  virtual int host_blocks() const = 0;
  // Bytes of K and V for one token across all layers.
  virtual size_t kv_bytes_per_token() const = 0;
  // The pool as the KV manager plans over it: sizes, bytes per block and layer groups
  // (this default: one group of every layer).
  virtual KvConfig kv_config() const {
    return KvConfig{block_size(), device_blocks(), host_blocks(), static_cast<int64_t>(kv_block_bytes())};
  }

  // Writes logits for batch.logit_rows into `logits` (logit_rows.size() x vocab).
  virtual void forward(const ForwardBatch& batch, std::vector<float>& logits) = 0;

  // KV data movement planned by the scheduler (block ids of the named tiers).
  virtual void copy_device_block(int32_t src, int32_t dst) = 0;
  virtual void swap_out(int32_t device_block, int32_t host_block) = 0;
  virtual void swap_in(int32_t host_block, int32_t device_block) = 0;

  // Runs a plan's KV ops in order, then the forward pass. A backend may overlap them
  // layer by layer instead (layer l computes once every op's layer-l part is done, in
  // plan order): the K/V each layer reads are the same, so are the logits, and a
  // device->host copy still waits for the swap-ins before it in the plan.
  virtual void forward_after(std::span<const KvOp> ops, const ForwardBatch& batch, std::vector<float>& logits) {
    for (const KvOp& op : ops) run(op);
    forward(batch, logits);
  }
  void run(const KvOp& op) {
    switch (op.kind) {
      case KvOpKind::SwapOut: swap_out(op.src, op.dst); break;
      case KvOpKind::SwapIn: swap_in(op.src, op.dst); break;
      case KvOpKind::Copy: copy_device_block(op.src, op.dst); break;
    }
  }

  // The raw bytes of one block (kv_block_bytes() of them), for a tier below the host
  // (the shared KV tier of `seer serve --shared-kv`).
  virtual size_t kv_block_bytes() const = 0;
  virtual void read_kv_block(bool host, int32_t block, void* dst) const = 0;
  virtual void write_host_kv_block(int32_t block, const void* src) = 0;
};

struct CpuBackendOptions {
  KvStorageConfig kv;
  int threads = 0;  // 0: all cores
  // forward_after copies layer l+1's K/V of the plan's ops while layer l computes
  // (false: all ops first, then the forward pass).
  bool pipeline_kv_ops = true;
};

std::unique_ptr<Backend> make_cpu_backend(const ModelFile& model, const CpuBackendOptions& opts);

}  // namespace seer
