#include "sim/cost_model.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "common/error.h"

namespace seer {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

// sum of min(cap, x) for x = a .. b (a <= b; all >= 1).
double sum_capped(double a, double b, double cap) {
  if (b <= cap) return (a + b) * (b - a + 1) / 2;
  if (a > cap) return (b - a + 1) * cap;
  return (a + cap) * (cap - a + 1) / 2 + (b - cap) * cap;
}

}  // namespace

CostModel::CostModel(ModelSpec model, HardwareSpec hw, CostModelOptions opts)
    : model_(std::move(model)), hw_(std::move(hw)), opts_(opts) {
  if (opts_.tp < 1 || opts_.tp > 1024) fail("tensor-parallel degree must be in [1, 1024], got {}", opts_.tp);
  if (model_.heads % opts_.tp != 0)
    fail("tensor-parallel degree {} does not divide the {} attention heads of {}", opts_.tp, model_.heads,
         model_.name);
  if (!(opts_.weight_bytes_per_param > 0) || !(opts_.kv_bytes_per_element > 0))
    fail("bytes per weight and per K/V element must be positive");
  heads_per_device_ = model_.heads / opts_.tp;
  kv_heads_per_device_ = ceil_div(model_.kv_heads, opts_.tp);
  check_pipeline();
  layers_per_stage_ = ceil_div(model_.layers, opts_.pp);
  gpus_per_node_ = opts_.gpus_per_node > 0 ? opts_.gpus_per_node : hw_.gpus_per_node;
  if (opts_.check_fits && weight_bytes_per_device() >= hw_.memory_bytes)
    fail("{} needs {:.1f} GiB of weights per device with tp={}{}, more than the {:.1f} GiB of {}", model_.name,
         weight_bytes_per_device() / 1073741824.0, opts_.tp, opts_.pp > 1 ? fmt::format(" pp={}", opts_.pp) : "",
         hw_.memory_bytes / 1073741824.0, hw_.name);
}

void CostModel::check_pipeline() const {
  if (opts_.pp < 1 || (opts_.pp > 1 && opts_.pp > model_.layers))  // (a shape without layers times all-reduces)
    fail("pipeline-parallel degree must be in [1, {}] (the layers of {}), got {}", model_.layers, model_.name,
         opts_.pp);
  if (opts_.gpus_per_node < 0) fail("GPUs per node must be positive, got {}", opts_.gpus_per_node);
  if (opts_.pp == 1) return;
  const int per_node = opts_.gpus_per_node > 0 ? opts_.gpus_per_node : hw_.gpus_per_node;
  if (opts_.tp * opts_.pp <= per_node) return;  // one node
  if (per_node % opts_.tp != 0)
    fail("a tensor-parallel group of {} devices would straddle nodes of {} GPUs (multi-node tensor parallelism "
         "is not modelled)",
         opts_.tp, per_node);
  if (!(hw_.network_bandwidth > 0))
    fail("tp={} pp={} needs {} nodes of {} GPUs, but hardware '{}' has no network_bandwidth in the catalog",
         opts_.tp, opts_.pp, ceil_div(opts_.tp * opts_.pp, per_node), per_node, hw_.name);
}

int64_t CostModel::weight_bytes() const {
  return static_cast<int64_t>(static_cast<double>(model_.parameter_count()) * opts_.weight_bytes_per_param);
}

double CostModel::layer_params_per_device() const {
  // Q/O/FFN split evenly; K/V projections are replicated when there are fewer K/V
  // heads than devices.
  const double h = model_.hidden, hd = model_.head_dim;
  return h * heads_per_device_ * hd * 2 + 2 * h * kv_heads_per_device_ * hd +
         (model_.gated_ffn ? 3 : 2) * h * model_.ffn * std::max(1, model_.experts) / opts_.tp +
         h * model_.experts;
}

double CostModel::lm_head_params_per_device() const { return double(model_.vocab) * model_.hidden / opts_.tp; }

int64_t CostModel::weight_bytes_per_device() const {
  // With stages, the first holds the embedding and the last the LM head (each its
  // own copy when they are tied): one vocab x hidden matrix on the largest stage.
  double embed = lm_head_params_per_device() * (opts_.pp > 1 || model_.tied_embeddings ? 1 : 2);
  return static_cast<int64_t>((layer_params_per_device() * layers_per_stage_ + embed) *
                              opts_.weight_bytes_per_param);
}

int64_t CostModel::kv_bytes_per_token() const {
  return static_cast<int64_t>(2.0 * model_.layers * model_.kv_heads * model_.head_dim * opts_.kv_bytes_per_element);
}

int64_t CostModel::kv_bytes_per_token_per_device() const {
  return static_cast<int64_t>(2.0 * layers_per_stage_ * kv_heads_per_device_ * model_.head_dim *
                              opts_.kv_bytes_per_element);
}

const char* vidur_op_name(LayerOp op) {
  static constexpr const char* names[kLayerOpCount] = {
      "input_layernorm", "attn_pre_proj", "attn_rope",     "attn_post_proj", "post_attention_layernorm",
      "mlp_up_proj",     "mlp_act",       "mlp_down_proj", "add"};
  return names[static_cast<size_t>(op)];
}

double CostModel::gemm_time(double tokens, double k, double n) const {
  const KernelRegime regime = hw_.linear_regime(tokens);
  const double mem = k * n * opts_.weight_bytes_per_param / (hw_.memory_bandwidth * regime.memory);
  const double flops = 2.0 * tokens * k * n / (hw_.peak_flops * regime.compute);
  const double p = regime.overlap;
  const double t = p == 1.0 ? mem + flops : std::pow(std::pow(mem, p) + std::pow(flops, p), 1.0 / p);
  return std::max(hw_.kernel_latency_s, t);
}

double CostModel::expert_gemm_time(double tokens, double k, double n) const {
  const double e = model_.experts, used = model_.experts_used;
  const double touched = e * (1.0 - std::pow(1.0 - used / e, tokens));
  const KernelRegime regime = hw_.linear_regime(tokens * used / e);  // tokens per expert
  const double mem = touched * k * n * opts_.weight_bytes_per_param / (hw_.memory_bandwidth * regime.memory);
  const double flops = 2.0 * tokens * used * k * n / (hw_.peak_flops * regime.compute);
  const double p = regime.overlap;
  const double t = p == 1.0 ? mem + flops : std::pow(std::pow(mem, p) + std::pow(flops, p), 1.0 / p);
  return std::max(hw_.kernel_latency_s, t);
}

LayerOpTimes CostModel::layer_op_times(double tokens) const {
  const double h = model_.hidden, hd = model_.head_dim, ffn = double(model_.ffn) / opts_.tp;
  const double q = heads_per_device_ * hd, kv = kv_heads_per_device_ * hd;
  // Elementwise: elements read + written. Norm (in, out); RoPE on Q and K (in, out);
  // activation (gate and up in, one out; without a gate up in, out); residual add (2 in, out).
  const double a = opts_.activation_bytes * tokens;
  auto elementwise = [&](double bytes) {
    return std::max(hw_.kernel_latency_s, bytes / (hw_.memory_bandwidth * hw_.efficiency.elementwise));
  };
  LayerOpTimes t{};
  auto at = [&t](LayerOp op) -> double& { return t[static_cast<size_t>(op)]; };
  at(LayerOp::InputNorm) = elementwise(2 * h * a);
  at(LayerOp::QkvProj) = gemm_time(tokens, h, q + 2 * kv);
  at(LayerOp::Rope) = elementwise(2 * (q + kv) * a);
  at(LayerOp::OutProj) = gemm_time(tokens, q, h);
  at(LayerOp::PostAttentionNorm) = model_.parallel_block ? 0.0 : elementwise(2 * h * a);
  if (model_.experts > 0) {  // the router, then only the chosen experts
    at(LayerOp::UpProj) = gemm_time(tokens, h, model_.experts) +
                          expert_gemm_time(tokens, h, (model_.gated_ffn ? 2 : 1) * ffn);
    at(LayerOp::Activation) = elementwise((model_.gated_ffn ? 3 : 2) * ffn * a * model_.experts_used);
    at(LayerOp::DownProj) = expert_gemm_time(tokens, ffn, h);
  } else {
    at(LayerOp::UpProj) = gemm_time(tokens, h, (model_.gated_ffn ? 2 : 1) * ffn);
    at(LayerOp::Activation) = elementwise((model_.gated_ffn ? 3 : 2) * ffn * a);
    at(LayerOp::DownProj) = gemm_time(tokens, ffn, h);
  }
  at(LayerOp::ResidualAdd) = elementwise(3 * h * a);
  return t;
}

double CostModel::layer_time(double tokens) const {
  double sum = 0;
  for (double t : layer_op_times(tokens)) sum += t;
  return sum;
}

double CostModel::all_reduce_time(double bytes, int devices) const {
  if (devices <= 1) return 0;
  const double ring = 2.0 * (devices - 1) / devices * bytes;
  return ring / (hw_.interconnect_bandwidth * hw_.efficiency.interconnect) + hw_.all_reduce_latency_s;
}

CostModel::BlockTimes CostModel::block_times(std::span<const ChunkShape> chunks, double layers) const {
  const Efficiency& eff = hw_.efficiency;
  const double bw = hw_.memory_bandwidth;
  const double peak = hw_.peak_flops;
  BlockTimes t;
  double sampled = 0;
  for (const auto& c : chunks) {
    t.tokens += c.query_tokens;
    sampled += (c.sample ? 1 : 0) + c.draft_rows;
  }

  const double hidden = model_.hidden;
  if (t.tokens > 0) t.linear_s = layers * layer_time(t.tokens);

  // Per chunk: K/V of all positions read once (tiled kernels), new K/V written once.
  const double kv_token_layer = 2.0 * kv_heads_per_device_ * model_.head_dim * opts_.kv_bytes_per_element;
  const double qk_dim = double(heads_per_device_) * model_.head_dim;
  // Sliding-window layers: a query at position p reads min(window, p + 1) keys.
  const double local_share = model_.layers > 0 ? double(model_.local_layers) / model_.layers : 0.0;
  const double window = model_.sliding_window;
  for (const auto& c : chunks) {
    if (c.query_tokens <= 0) continue;
    double q = c.query_tokens, before = c.context_before;
    auto time = [&](double read_tokens, double pairs) {
      const double bytes = read_tokens * kv_token_layer + q * kv_token_layer;
      const double flops = 4.0 * qk_dim * pairs;  // QK^T and PV, 2 FLOPs per MAC each
      return std::max(bytes / (bw * eff.attention_memory), flops / (peak * eff.attention_compute));
    };
    const double global = time(before + q, q * before + q * (q + 1) / 2);  // causal (query, key) pairs
    double local = 0;
    if (local_share > 0)
      local = time(std::min(before + q, window + q - 1), sum_capped(before + 1, before + q, window));
    t.attention_s += layers * ((1 - local_share) * global + local_share * local);
  }

  if (opts_.tp > 1 && t.tokens > 0) {
    // Two ring all-reduces per block (after attention, after the MLP).
    t.all_reduce_s = 2.0 * layers * all_reduce_time(t.tokens * hidden * opts_.activation_bytes, opts_.tp);
  }

  if (sampled > 0) {
    t.lm_head_s = gemm_time(sampled, hidden, double(model_.vocab) / opts_.tp);
  }
  return t;
}

std::vector<std::vector<ChunkShape>> CostModel::micro_batches(const std::vector<ChunkShape>& chunks) const {
  if (opts_.pp == 1 || chunks.size() <= 1) return {chunks};
  const size_t m = std::min(static_cast<size_t>(opts_.pp), chunks.size());
  std::vector<size_t> order(chunks.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return chunks[a].query_tokens > chunks[b].query_tokens; });
  std::vector<std::vector<ChunkShape>> out(m);
  std::vector<int64_t> load(m, 0);
  for (size_t i : order) {
    size_t k = 0;  // the fewest tokens, then the fewest chunks (no micro-batch stays empty)
    for (size_t j = 1; j < m; ++j)
      if (load[j] < load[k] || (load[j] == load[k] && out[j].size() < out[k].size())) k = j;
    out[k].push_back(chunks[i]);
    load[k] += chunks[i].query_tokens;
  }
  return out;
}

double CostModel::stage_time(std::span<const ChunkShape> chunks) const {
  return block_times(chunks, layers_per_stage_).blocks_s();
}

bool CostModel::crosses_nodes(int boundary) const {
  // Stage k holds devices [k tp, (k + 1) tp); rank r sends to the same rank of the
  // next stage.
  for (int r = 0; r < opts_.tp; ++r)
    if ((boundary * opts_.tp + r) / gpus_per_node_ != ((boundary + 1) * opts_.tp + r) / gpus_per_node_) return true;
  return false;
}

double CostModel::send_recv_time(double tokens, int boundary) const {
  if (tokens <= 0) return 0;
  // Every rank of a stage sends the whole activations to its peer, all ranks at once.
  const double bytes = tokens * model_.hidden * opts_.activation_bytes;
  if (crosses_nodes(boundary)) return hw_.network_latency_s + bytes / hw_.network_bandwidth;
  if (hw_.send_recv_bandwidth > 0) return hw_.send_recv_latency_s + bytes / hw_.send_recv_bandwidth;
  return hw_.all_reduce_latency_s + bytes / (hw_.interconnect_bandwidth * hw_.efficiency.interconnect);
}

void CostModel::pipelined(const std::vector<ChunkShape>& chunks, CostBreakdown& b) const {
  const int n = opts_.pp;
  double slowest = -1, last_stage_busy = 0;
  for (const auto& mb : micro_batches(chunks)) {
    const BlockTimes t = block_times(mb, layers_per_stage_);
    double send = 0;
    for (int k = 0; k + 1 < n; ++k) send += send_recv_time(t.tokens, k);
    // Through all n stages, the LM head on the last one, a send at each boundary.
    const double latency = n * t.blocks_s() + t.lm_head_s + send;
    last_stage_busy += t.blocks_s() + t.lm_head_s;
    if (latency > slowest) {
      slowest = latency;
      b.linear_s = n * t.linear_s;
      b.attention_s = n * t.attention_s;
      b.all_reduce_s = n * t.all_reduce_s;
      b.lm_head_s = t.lm_head_s;
      b.pipeline_s = send;
    }
  }
  // The last stage runs every micro-batch's blocks and LM head one after another.
  if (last_stage_busy > slowest) b.pipeline_s += last_stage_busy - slowest;
}

CostBreakdown CostModel::breakdown(const IterationShape& s) const {
  const Efficiency& eff = hw_.efficiency;
  CostBreakdown b;
  b.overhead_s = hw_.iteration_overhead_s;
  if (opts_.pp == 1) {
    const BlockTimes t = block_times(s.chunks, model_.layers);
    b.linear_s = t.linear_s;
    b.attention_s = t.attention_s;
    b.all_reduce_s = t.all_reduce_s;
    b.lm_head_s = t.lm_head_s;
  } else {
    pipelined(s.chunks, b);
  }

  // Each device moves its own shard (its stage's layers, its heads) over its own host link.
  const double swap_s = double(s.swap_bytes) / opts_.tp / opts_.pp / (hw_.host_link_bandwidth * eff.host_link);
  b.swap_s = exposed_swap_time(swap_s, b.linear_s + b.attention_s + b.all_reduce_s);
  b.copy_s = 2.0 * double(s.copy_bytes) / opts_.tp / opts_.pp / (hw_.memory_bandwidth * eff.memory);
  if (opts_.constrained_share > 0) {
    int64_t sampled = 0;
    for (const ChunkShape& c : s.chunks) sampled += c.sample + c.draft_rows;
    // The expected constrained rows spread over the sampling threads, a whole row to a
    // thread: at least one row's time whenever any row is constrained.
    const double share = opts_.constrained_share, rows = double(sampled);
    const double rows_per_thread = std::max(share * rows / opts_.sampling_threads, 1.0 - std::pow(1.0 - share, rows));
    b.grammar_s = rows_per_thread * double(model_.vocab) * opts_.mask_s_per_vocab_entry;
  }
  return b;
}

double CostModel::exposed_swap_time(double swap_s, double layers_s) const {
  if (!opts_.pipelined_swaps || swap_s <= 0) return swap_s;
  // Layer l computes once its own K/V are copied and layer l-1 is done: with c copy
  // and k compute per layer, the layers end at c + k + (L-1) max(c, k).
  const double n = model_.layers, c = swap_s / n, k = layers_s / n;
  return c + k + (n - 1) * std::max(c, k) - layers_s;
}

double CostModel::prefill_time(int32_t tokens, int32_t context_before) const {
  IterationShape s;
  s.chunks.push_back({tokens, context_before, true});
  return iteration_time(s);
}

double CostModel::decode_time(int32_t batch, int32_t context) const {
  IterationShape s;
  s.chunks.assign(static_cast<size_t>(std::max(batch, 0)), ChunkShape{1, std::max(context - 1, 0), true});
  return iteration_time(s);
}

double profile_iteration_time(const CostModel& cost, int32_t tokens, int32_t context, int64_t kv_tokens) {
  IterationShape s;
  s.chunks.push_back({tokens, context, true});
  // The decodes' K/V reads as one range: the bytes and attention FLOPs are the same
  // however they split over requests.
  if (kv_tokens > 0)
    s.chunks.push_back({1, static_cast<int32_t>(std::min<int64_t>(kv_tokens - 1, INT32_MAX - 1)), false});
  return cost.iteration_time(s);
}

}  // namespace seer
