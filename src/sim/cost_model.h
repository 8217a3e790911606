#pragma once
// Roofline cost of one engine iteration on a given accelerator and model (docs/architecture.md §2,
// SimExecutor). Per transformer block: each GEMM takes weight bytes / bandwidth +
// FLOPs / peak (no overlap: what Vidur's GPU profiles show, docs/simulator.md; a
// p-norm of the two in kernel regimes that overlap them), at least one kernel floor; the elementwise ops (norms, RoPE, activation, residual add)
// take their activation traffic / bandwidth; attention per chunk takes
// max(K/V bytes read / bandwidth, its FLOPs / peak); tensor parallelism splits
// weights, heads and K/V over `tp` devices and adds two ring all-reduces per block.
// Swaps cost bytes / host-link bandwidth on one copy stream that runs a plan's
// swaps in order, layer by layer (so a swap-out still waits for the swap-ins before
// it), pipelined with the layers: each layer waits only for its own K/V, per layer
// max(copy, compute) instead of the sum. A fixed per-iteration overhead covers
// launches and sampling. Every peak is scaled by the hardware's efficiency factors,
// a GEMM's by those of the kernel regime its row count falls in (catalog.h).
// Pipeline parallelism splits the layers evenly over `pp` stages of `tp` devices
// each and the batch's chunks into up to `pp` micro-batches that flow through the
// stages; the iteration lasts as long as its slowest micro-batch takes through all
// stages and the sends between them, at least as long as the last stage is busy
// (docs/simulator.md, "Pipeline parallelism"). pp = 1 is the model above, unchanged.
#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "sim/catalog.h"

namespace seer {

struct CostModelOptions {
  int tp = 1;                           // tensor-parallel degree
  int pp = 1;                           // pipeline stages (tp devices each)
  int gpus_per_node = 0;                // where stage boundaries leave a node (0: the hardware's)
  double weight_bytes_per_param = 2.0;  // FP16 weights
  double kv_bytes_per_element = 2.0;    // FP16 K/V
  double activation_bytes = 2.0;        // per element, for all-reduce traffic
  bool check_fits = true;               // refuse models whose weights exceed the device
  // Swaps overlap the forward pass layer by layer (layer l+1's K/V copied while
  // layer l computes), as the CPU backend does; false: copied first.
  bool pipelined_swaps = true;
  // Constrained decoding (docs/structured-outputs.md): the expected share of sampled
  // rows under a grammar, and the host CPU time one such row's token mask costs per
  // vocabulary entry once the logits are known: its application to them (0.4 ns:
  // bench_grammar_mask, warm, on the 2-core Xeon of docs/results; 12.3 µs at 32k,
  // 52.3 µs at 123k tokens per request and step). The mask itself is computed while
  // the forward pass runs (ModelExecutor), so it is not counted; the rows are sampled
  // in parallel on `sampling_threads` host threads (the executor's default on a host
  // with 8 or more hardware threads).
  double constrained_share = 0;
  double mask_s_per_vocab_entry = 0.4e-9;
  int sampling_threads = 8;
};

// One scheduled range of a request: `query_tokens` new tokens at positions
// [context_before, context_before + query_tokens), attending causally to all earlier
// positions. `sample` adds a row to the LM head.
struct ChunkShape {
  int32_t query_tokens = 0;
  int32_t context_before = 0;
  bool sample = false;
  int32_t draft_rows = 0;  // more LM-head rows: the draft tokens a sampled chunk verifies
};

struct IterationShape {
  std::vector<ChunkShape> chunks;
  int64_t swap_bytes = 0;  // device <-> host, whole model (all TP shards)
  int64_t copy_bytes = 0;  // device -> device block copies, whole model
};

// The non-attention ops of one transformer block, in Vidur's profile order.
enum class LayerOp { InputNorm, QkvProj, Rope, OutProj, PostAttentionNorm, UpProj, Activation, DownProj, ResidualAdd };
inline constexpr size_t kLayerOpCount = 9;
using LayerOpTimes = std::array<double, kLayerOpCount>;
// Vidur's name of the op ("attn_pre_proj", ...).
const char* vidur_op_name(LayerOp op);

struct CostBreakdown {
  double linear_s = 0;
  double attention_s = 0;
  double all_reduce_s = 0;
  double lm_head_s = 0;
  double swap_s = 0;  // swap time not hidden behind the layers' compute
  double copy_s = 0;
  double overhead_s = 0;
  // pp > 1: the slowest micro-batch's sends between stages, plus the time the last
  // stage stays busy with the others beyond that micro-batch's own path (the other
  // fields are that micro-batch's, over all stages).
  double pipeline_s = 0;
  double grammar_s = 0;  // token masks of the constrained share of sampled rows
  double total() const {
    return linear_s + attention_s + all_reduce_s + lm_head_s + swap_s + copy_s + overhead_s + pipeline_s + grammar_s;
  }
};

class CostModel {
 public:
  // Throws seer::Error when tp does not divide the heads, pp exceeds the layers, a
  // tensor-parallel group would straddle two nodes, a pipeline crosses nodes on
  // hardware without a network bandwidth, or the model's weights do not fit the
  // devices.
  CostModel(ModelSpec model, HardwareSpec hw, CostModelOptions opts = {});

  CostBreakdown breakdown(const IterationShape& s) const;
  double iteration_time(const IterationShape& s) const { return breakdown(s).total(); }

  // Shorthands: one prompt chunk (sampled at its end), or `batch` decodes at `context`.
  double prefill_time(int32_t tokens, int32_t context_before = 0) const;
  double decode_time(int32_t batch, int32_t context) const;

  // One transformer block on one device without attention, per op: the four GEMMs
  // (QKV, O, up/gate, down) and the elementwise ops as activation traffic; each op at
  // least the kernel floor. PostAttentionNorm is 0 for parallel blocks. This is what
  // `seer sim validate` checks against measured profiles.
  LayerOpTimes layer_op_times(double tokens) const;
  double layer_time(double tokens) const;
  // A ring all-reduce of `bytes` over `devices` devices.
  double all_reduce_time(double bytes, int devices) const;

  // Pipeline parallelism. Layers of one stage: ceil(layers / pp), the slowest
  // stage's when pp does not divide them.
  int layers_per_stage() const { return layers_per_stage_; }
  // The chunks of one iteration as up to pp micro-batches, balanced by query
  // tokens (largest chunk first into the micro-batch with the fewest tokens; a
  // chunk is never split). One micro-batch, the chunks in plan order, when pp = 1.
  std::vector<std::vector<ChunkShape>> micro_batches(const std::vector<ChunkShape>& chunks) const;
  // One micro-batch on one stage: its blocks (linear, attention, TP all-reduces)
  // over layers_per_stage() layers; no LM head, no overhead.
  double stage_time(std::span<const ChunkShape> chunks) const;
  // Sending `tokens` rows of activations (tokens x hidden x activation_bytes) from
  // stage `boundary` to stage `boundary + 1`: latency + bytes / bandwidth of the
  // link between them (within a node or across nodes, from gpus_per_node).
  double send_recv_time(double tokens, int boundary) const;
  // Whether that boundary leaves the node.
  bool crosses_nodes(int boundary) const;

  int64_t weight_bytes() const;             // whole model
  int64_t weight_bytes_per_device() const;  // one TP shard of one (the largest) pipeline stage
  // K/V bytes of one token of every layer. With sliding-window layers a pool block
  // holds one layer group's share (sim_kv_config, kv/kv_layer_groups.h), and the
  // local groups' blocks behind the window are freed.
  int64_t kv_bytes_per_token() const;       // all layers, all shards
  int64_t kv_bytes_per_token_per_device() const;  // one stage's layers, one shard

  const ModelSpec& model() const { return model_; }
  const HardwareSpec& hardware() const { return hw_; }
  const CostModelOptions& options() const { return opts_; }

 private:
  double layer_params_per_device() const;
  void check_pipeline() const;
  double lm_head_params_per_device() const;
  // The part of `swap_s` of copies that the `layers_s` of the transformer blocks
  // do not hide (all of it without pipelining).
  double exposed_swap_time(double swap_s, double layers_s) const;
  // A [tokens x k] x [k x n] GEMM with FP16-style weights of k x n parameters.
  double gemm_time(double tokens, double k, double n) const;
  // The same for one FFN projection of a mixture of experts: each token runs
  // experts_used experts (the FLOPs), and the weights read are those of the experts
  // some token chose: E (1 - (1 - used/E)^tokens) of them in expectation when
  // tokens choose independently and uniformly.
  double expert_gemm_time(double tokens, double k, double n) const;
  // The blocks and LM head of `chunks` over `layers` layers (the whole model when
  // pp = 1, one stage otherwise).
  struct BlockTimes {
    double tokens = 0, linear_s = 0, attention_s = 0, all_reduce_s = 0, lm_head_s = 0;
    double blocks_s() const { return linear_s + attention_s + all_reduce_s; }
  };
  BlockTimes block_times(std::span<const ChunkShape> chunks, double layers) const;
  // pp > 1: fills the compute fields and pipeline_s of `b` for the iteration's chunks.
  void pipelined(const std::vector<ChunkShape>& chunks, CostBreakdown& b) const;

  ModelSpec model_;
  HardwareSpec hw_;
  CostModelOptions opts_;
  int heads_per_device_ = 0;
  int kv_heads_per_device_ = 0;  // K/V heads are replicated when tp > kv_heads
  int layers_per_stage_ = 0;
  int gpus_per_node_ = 0;
};

// Sarathi's profile point (docs/architecture.md §1.3): the time of an iteration of `tokens` prompt
// tokens in one chunk after `context` cached ones, while the batch's decodes read
// `kv_tokens` tokens of K/V (stall-free batching runs every decode in every
// iteration). The scheduler picks the largest token budget whose time meets the
// TBT SLO.
double profile_iteration_time(const CostModel& cost, int32_t tokens, int32_t context, int64_t kv_tokens = 0);

}  // namespace seer
