#include "sim/cost_model.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace seer {
namespace {

int ceil_div(int a, int b) { return (a + b - 1) / b; }

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
  if (opts_.check_fits && weight_bytes_per_device() >= hw_.memory_bytes)
    fail("{} needs {:.1f} GiB of weights per device with tp={}, more than the {:.1f} GiB of {}", model_.name,
         weight_bytes_per_device() / 1073741824.0, opts_.tp, hw_.memory_bytes / 1073741824.0, hw_.name);
}

int64_t CostModel::weight_bytes() const {
  return static_cast<int64_t>(static_cast<double>(model_.parameter_count()) * opts_.weight_bytes_per_param);
}

double CostModel::layer_params_per_device() const {
  // Q/O/FFN split evenly; K/V projections are replicated when there are fewer K/V
  // heads than devices.
  const double h = model_.hidden, hd = model_.head_dim;
  return h * heads_per_device_ * hd * 2 + 2 * h * kv_heads_per_device_ * hd +
         (model_.gated_ffn ? 3 : 2) * h * model_.ffn / opts_.tp;
}

double CostModel::lm_head_params_per_device() const { return double(model_.vocab) * model_.hidden / opts_.tp; }

int64_t CostModel::weight_bytes_per_device() const {
  double embed = lm_head_params_per_device() * (model_.tied_embeddings ? 1 : 2);
  return static_cast<int64_t>((layer_params_per_device() * model_.layers + embed) * opts_.weight_bytes_per_param);
}

int64_t CostModel::kv_bytes_per_token() const {
  return static_cast<int64_t>(2.0 * model_.layers * model_.kv_heads * model_.head_dim * opts_.kv_bytes_per_element);
}

int64_t CostModel::kv_bytes_per_token_per_device() const {
  return static_cast<int64_t>(2.0 * model_.layers * kv_heads_per_device_ * model_.head_dim *
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
  at(LayerOp::UpProj) = gemm_time(tokens, h, (model_.gated_ffn ? 2 : 1) * ffn);
  at(LayerOp::Activation) = elementwise((model_.gated_ffn ? 3 : 2) * ffn * a);
  at(LayerOp::DownProj) = gemm_time(tokens, ffn, h);
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

CostBreakdown CostModel::breakdown(const IterationShape& s) const {
  const Efficiency& eff = hw_.efficiency;
  const double bw = hw_.memory_bandwidth;
  const double peak = hw_.peak_flops;
  const double layers = model_.layers;
  CostBreakdown b;
  b.overhead_s = hw_.iteration_overhead_s;

  double tokens = 0, sampled = 0;
  for (const auto& c : s.chunks) {
    tokens += c.query_tokens;
    sampled += c.sample ? 1 : 0;
  }

  const double hidden = model_.hidden;
  if (tokens > 0) b.linear_s = layers * layer_time(tokens);

  // Per chunk: K/V of all positions read once (tiled kernels), new K/V written once.
  const double kv_token_layer = 2.0 * kv_heads_per_device_ * model_.head_dim * opts_.kv_bytes_per_element;
  const double qk_dim = double(heads_per_device_) * model_.head_dim;
  for (const auto& c : s.chunks) {
    if (c.query_tokens <= 0) continue;
    double q = c.query_tokens, before = c.context_before;
    double bytes = (before + q) * kv_token_layer + q * kv_token_layer;
    double pairs = q * before + q * (q + 1) / 2;  // causal (query, key) pairs
    double flops = 4.0 * qk_dim * pairs;         // QK^T and PV, 2 FLOPs per MAC each
    b.attention_s += layers * std::max(bytes / (bw * eff.attention_memory), flops / (peak * eff.attention_compute));
  }

  if (opts_.tp > 1 && tokens > 0) {
    // Two ring all-reduces per block (after attention, after the MLP).
    b.all_reduce_s = 2.0 * layers * all_reduce_time(tokens * hidden * opts_.activation_bytes, opts_.tp);
  }

  if (sampled > 0) {
    b.lm_head_s = gemm_time(sampled, hidden, double(model_.vocab) / opts_.tp);
  }

  // Each device moves its own shard over its own host link.
  const double swap_s = double(s.swap_bytes) / opts_.tp / (hw_.host_link_bandwidth * eff.host_link);
  b.swap_s = exposed_swap_time(swap_s, b.linear_s + b.attention_s + b.all_reduce_s);
  b.copy_s = 2.0 * double(s.copy_bytes) / opts_.tp / (bw * eff.memory);
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
