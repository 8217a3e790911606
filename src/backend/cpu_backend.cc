#include "backend/cpu_backend.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <limits>
#include <thread>

#include "common/error.h"
#include "kernels/convert.h"
#include "model/kv_type.h"

namespace seer {
namespace {

std::vector<float> to_f32(const WeightTensor& t) {
  std::vector<float> v;
  if (!t.present()) return v;
  v.resize(static_cast<size_t>(t.rows * t.cols));
  weight_rows_to_f32(t, 0, t.rows, v.data());
  return v;
}

int derive_device_blocks(const ModelConfig& c, const KvStorageConfig& kv, size_t bytes_per_token) {
  if (kv.device_blocks > 0) return kv.device_blocks;
  // A block holds one layer group's share of a token's bytes.
  const KvLayerGroups& g = kv.layer_groups;
  const size_t groups = g.group.empty() ? 1 : static_cast<size_t>(g.groups);
  bytes_per_token = static_cast<size_t>(g.block_share(static_cast<int64_t>(bytes_per_token)));
  if (kv.device_bytes > 0) {
    size_t blocks = kv.device_bytes / (bytes_per_token * static_cast<size_t>(kv.block_size));
    if (blocks == 0) fail("KV memory of {} bytes holds no block of {} tokens", kv.device_bytes, kv.block_size);
    return static_cast<int>(std::min<size_t>(blocks, 1 << 30));
  }
  return static_cast<int>(groups) * ((c.context_length + kv.block_size - 1) / kv.block_size);  // one full-length sequence
}

// rope_freqs.weight as divisors for Rope, or null; each must be positive.
const float* rope_divisors(const ModelConfig& c, const ModelWeights& w) {
  if (!c.rope_freqs) return nullptr;
  const WeightTensor& t = w.rope_freqs;
  const int n = (c.rope_dim > 0 ? c.rope_dim : c.head_dim) / 2;
  if (!t.present() || t.type != GgmlType::F32 || t.rows * t.cols != n)
    fail("model: RoPE frequency tensor '{}' must be F32 with {} elements", t.name, n);
  const float* f = static_cast<const float*>(t.data);
  for (int i = 0; i < n; ++i)
    if (!(f[i] > 0.0f)) fail("model: {}[{}] = {} must be positive", t.name, i, f[i]);
  return f;
}

double linear_rope_factor(const ModelConfig& c) {
  const std::string& t = c.rope_scaling.type;
  if (t == "none" || t.empty()) return 1.0;
  if (t == "longrope") return 1.0;  // its factors are a tensor (rope_divisors)
  if (t == "linear") {
    if (c.rope_scaling.factor <= 0) fail("RoPE linear scaling factor {} must be positive", c.rope_scaling.factor);
    return c.rope_scaling.factor;
  }
  fail("RoPE scaling type '{}' is not supported by the CPU backend (supported: none, linear)", t);
}

// Adds the wall time since the last mark to a profile field when profiling is on.
class PhaseTimer {
 public:
  explicit PhaseTimer(bool on) : on_(on), last_(now()) {}
  void mark(double& field) {
    if (!on_) return;
    const auto t = now();
    field += std::chrono::duration<double>(t - last_).count();
    last_ = t;
  }

 private:
  static std::chrono::steady_clock::time_point now() { return std::chrono::steady_clock::now(); }
  bool on_;
  std::chrono::steady_clock::time_point last_;
};

}  // namespace

std::unique_ptr<Backend> make_cpu_backend(const ModelConfig& config, const ModelWeights& weights,
                                          const CpuBackendOptions& opts) {
  return std::make_unique<CpuBackend>(config, weights, opts);
}

std::unique_ptr<Backend> make_cpu_backend(const ModelFile& model, const CpuBackendOptions& opts) {
  return make_cpu_backend(model.config(), model.weights(), opts);
}

CpuBackend::CpuBackend(const ModelConfig& config, const ModelWeights& weights, const CpuBackendOptions& opts)
    : config_(config),
      weights_(weights),
      pool_(opts.threads),
      matmul_(pool_),
      kv_(KvShape{config.n_layers, config.n_kv_heads, config.head_dim, opts.kv.block_size, opts.kv.type,
                  opts.kv.layer_groups},
          derive_device_blocks(config, opts.kv, seer::kv_bytes_per_token(config, opts.kv.type)),
          opts.kv.host_blocks),
      attention_(config.n_heads, config.n_kv_heads, config.head_dim, pool_.size(),
                 static_cast<float>(config.attn_scale), static_cast<float>(config.attn_softcap)),
      rope_(config.head_dim, config.rope_base, config.rope_neox, linear_rope_factor(config),
            rope_divisors(config, weights), config.rope_dim, config.rope_attn_factor),
      rope_local_(config.head_dim, config.rope_base_local > 0 ? config.rope_base_local : config.rope_base,
                  config.rope_neox, 1.0, nullptr, config.rope_dim),
      pipeline_kv_ops_(opts.pipeline_kv_ops) {
  config_.validate("model");
  if (weights_.layers.size() != static_cast<size_t>(config_.n_layers))
    fail("model has {} layers of weights, config says {}", weights_.layers.size(), config_.n_layers);
  const int64_t q_dim = int64_t{config_.n_heads} * config_.head_dim;
  const int64_t kv_dim = int64_t{config_.n_kv_heads} * config_.head_dim;
  auto check = [](const WeightTensor& t, int64_t rows, int64_t cols) {
    if (!t.present()) fail("model: tensor '{}' is missing", t.name);
    if (t.rows != rows || t.cols != cols)
      fail("model: tensor '{}' is {} x {}, expected {} x {}", t.name, t.rows, t.cols, rows, cols);
    const auto info = ggml_type_info(static_cast<uint32_t>(t.type));
    if (!info || !info->computable)
      fail("model: tensor '{}' has type {}, not supported by the CPU backend", t.name, ggml_type_name(t.type));
    if (cols % info->block_elems != 0)
      fail("model: {} tensor '{}' needs a multiple of {} columns", info->name, t.name, info->block_elems);
  };
  auto check_f32 = [](const WeightTensor& t, int64_t cols) {
    if (!t.present() || t.type != GgmlType::F32 || t.rows * t.cols != cols)
      fail("model: norm tensor '{}' must be F32 with {} elements", t.name, cols);
  };
  check(weights_.token_embd, config_.vocab_size, config_.dim);
  check(weights_.output, config_.vocab_size, config_.dim);
  check_f32(weights_.output_norm, config_.dim);
  for (const auto& l : weights_.layers) {
    check_f32(l.attn_norm, config_.dim);
    check_f32(l.ffn_norm, config_.dim);
    check(l.wq, q_dim, config_.dim);
    check(l.wk, kv_dim, config_.dim);
    check(l.wv, kv_dim, config_.dim);
    check(l.wo, config_.dim, q_dim);
    if (config_.n_experts > 0) {
      check(l.router, config_.n_experts, config_.dim);
      check(l.gate_exps, int64_t{config_.ffn_dim} * config_.n_experts, config_.dim);
      check(l.up_exps, int64_t{config_.ffn_dim} * config_.n_experts, config_.dim);
      check(l.down_exps, int64_t{config_.dim} * config_.n_experts, config_.ffn_dim);
    } else {
      check(l.w_gate, config_.ffn_dim, config_.dim);
      check(l.w_up, config_.ffn_dim, config_.dim);
      check(l.w_down, config_.dim, config_.ffn_dim);
    }
    for (const WeightTensor* b : {&l.bq, &l.bk, &l.bv})
      if (b->present() != config_.qkv_bias) fail("model: bias '{}' presence does not match the config", b->name);
    if (config_.qk_norm) {
      check_f32(l.q_norm, config_.head_dim);
      check_f32(l.k_norm, config_.head_dim);
    }
    if (config_.post_norms) {
      check_f32(l.attn_post_norm, config_.dim);
      check_f32(l.ffn_post_norm, config_.dim);
    }
  }
  if (config_.n_experts > 0)
    moe_ = std::make_unique<MoeFfn>(config_.dim, config_.ffn_dim, config_.n_experts, config_.n_experts_used);
  for (const auto& l : weights_.layers) {
    bq_.push_back(to_f32(l.bq));
    bk_.push_back(to_f32(l.bk));
    bv_.push_back(to_f32(l.bv));
  }
}

template <class F>
void CpuBackend::rows(int64_t n, F&& fn) {
  if (n < 16) {
    for (int64_t r = 0; r < n; ++r) fn(r);
    return;
  }
  constexpr int64_t kChunk = 8;
  pool_.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t c, int) {
    for (int64_t r = c * kChunk; r < std::min(n, (c + 1) * kChunk); ++r) fn(r);
  });
}

KvConfig CpuBackend::kv_config() const {
  KvConfig k = Backend::kv_config();
  kv_.shape().layer_groups.apply(k, config_.sliding_window);
  return k;
}

void CpuBackend::check_batch(const ForwardBatch& b) const {
  const size_t n = b.tokens.size();
  if (b.positions.size() != n || b.seq_index.size() != n)
    fail("forward batch: {} tokens but {} positions and {} sequence indices", n, b.positions.size(),
         b.seq_index.size());
  const int bs = kv_.shape().block_size;
  const int groups = kv_.groups();
  const int window = config_.sliding_window;
  // Attention reads blocks 0..pos/bs of each token's sequence, a sliding-window
  // group only those in the token's window: all must be device blocks.
  std::vector<std::vector<int32_t>> positions(b.sequences.size());
  for (size_t i = 0; i < n; ++i) {
    if (b.tokens[i] < 0 || b.tokens[i] >= config_.vocab_size)
      fail("forward batch: token {} at index {} is outside the vocabulary (0..{})", b.tokens[i], i,
           config_.vocab_size - 1);
    if (b.seq_index[i] < 0 || static_cast<size_t>(b.seq_index[i]) >= b.sequences.size())
      fail("forward batch: sequence index {} at token {} out of range", b.seq_index[i], i);
    if (b.positions[i] < 0) fail("forward batch: negative position {} at token {}", b.positions[i], i);
    positions[static_cast<size_t>(b.seq_index[i])].push_back(b.positions[i]);
  }
  std::vector<char> local_group(static_cast<size_t>(groups), window > 0);  // every layer of the group is local
  for (int l = 0; l < config_.n_layers; ++l)
    if (!config_.layer_is_local(l)) local_group[static_cast<size_t>(kv_.group_of(l))] = 0;
  for (size_t s = 0; s < b.sequences.size(); ++s) {
    std::vector<int32_t>& pos = positions[s];
    if (pos.empty()) continue;
    std::sort(pos.begin(), pos.end());
    const auto& table = b.sequences[s].block_table;
    const int64_t logical = pos.back() / bs + 1;
    const int64_t needed = logical * groups;
    if (static_cast<int64_t>(table.size()) < needed)
      fail("forward batch: position {} of sequence {} needs {} blocks, its block table has {}", pos.back(), s,
           needed, table.size());
    std::vector<char> windowed(static_cast<size_t>(logical), 0);  // logical blocks some window reaches
    int64_t next = 0;
    for (int32_t p : pos) {
      const int64_t hi = p / bs;
      for (int64_t lb = std::max<int64_t>(next, std::max(0, p - window + 1) / bs); lb <= hi; ++lb)
        windowed[static_cast<size_t>(lb)] = 1;
      next = std::max(next, hi + 1);
    }
    for (int64_t j = 0; j < needed; ++j) {
      if (local_group[static_cast<size_t>(j % groups)] && !windowed[static_cast<size_t>(j / groups)]) continue;
      if (table[j] < 0 || table[j] >= kv_.device_blocks())
        fail("forward batch: block {} of sequence {} is device block {}, the pool has {}", j, s, table[j],
             kv_.device_blocks());
    }
  }
  for (int32_t r : b.logit_rows)
    if (r < 0 || static_cast<size_t>(r) >= n) fail("forward batch: logit row {} out of range (batch of {})", r, n);
}

void CpuBackend::resize_scratch(int64_t n) {
  const auto& c = config_;
  const size_t q_dim = static_cast<size_t>(c.n_heads) * c.head_dim;
  const size_t kv_dim = static_cast<size_t>(c.n_kv_heads) * c.head_dim;
  auto fit = [&](std::vector<float>& v, size_t per_row) {
    if (v.size() < per_row * n) v.resize(per_row * n);
  };
  fit(x_, c.dim);
  fit(xn_, c.dim);
  fit(tmp_, c.dim);
  fit(q_, q_dim);
  fit(att_, q_dim);
  fit(k_, kv_dim);
  fit(v_, kv_dim);
  fit(gate_, c.ffn_dim);
  fit(up_, c.ffn_dim);
  fit(cos_, c.head_dim / 2);
  fit(sin_, c.head_dim / 2);
  if (c.sliding_window > 0) {
    fit(cos_local_, c.head_dim / 2);
    fit(sin_local_, c.head_dim / 2);
  }
}

void CpuBackend::layer(const ForwardBatch& b, int l) {
  const auto& c = config_;
  const LayerWeights& w = weights_.layers[l];
  const int64_t n = static_cast<int64_t>(b.size());
  const int hd = c.head_dim, half = hd / 2;
  const int64_t q_dim = int64_t{c.n_heads} * hd, kv_dim = int64_t{c.n_kv_heads} * hd;
  const int bs = kv_.shape().block_size;
  const float eps = static_cast<float>(c.rms_eps);
  const bool local = c.layer_is_local(l);
  PhaseTimer timer(profiling_);

  rows(n, [&](int64_t r) {
    rmsnorm(&x_[r * c.dim], static_cast<const float*>(w.attn_norm.data), &xn_[r * c.dim], 1, c.dim, eps);
  });
  timer.mark(profile_.norm_rope_kv);
  const MatmulTarget qkv[] = {{&w.wq, q_.data()}, {&w.wk, k_.data()}, {&w.wv, v_.data()}};
  matmul_.run(xn_.data(), n, c.dim, qkv);
  timer.mark(profile_.qkv);
  rows(n, [&](int64_t r) {
    float* q = &q_[r * q_dim];
    float* k = &k_[r * kv_dim];
    float* v = &v_[r * kv_dim];
    if (!bq_[l].empty()) {
      add_inplace(q, bq_[l].data(), q_dim);
      add_inplace(k, bk_[l].data(), kv_dim);
      add_inplace(v, bv_[l].data(), kv_dim);
    }
    if (c.qk_norm) {
      rmsnorm(q, static_cast<const float*>(w.q_norm.data), q, c.n_heads, hd, eps);
      rmsnorm(k, static_cast<const float*>(w.k_norm.data), k, c.n_kv_heads, hd, eps);
    }
    const float* cs = local ? &cos_local_[r * half] : &cos_[r * half];
    const float* sn = local ? &sin_local_[r * half] : &sin_[r * half];
    const Rope& rope = local ? rope_local_ : rope_;
    rope.apply(q, c.n_heads, cs, sn);
    rope.apply(k, c.n_kv_heads, cs, sn);
    const int32_t pos = b.positions[r];
    const auto& table = b.sequences[b.seq_index[r]].block_table;
    kv_.write(kv_.block_of(table, pos / bs, l), pos % bs, l, k, v);
  });
  timer.mark(profile_.norm_rope_kv);
  attention_.run(pool_, b, kv_, l, q_.data(), att_.data(), local ? c.sliding_window : 0);
  timer.mark(profile_.attention);
  matmul_.run(att_.data(), n, w.wo, tmp_.data());
  timer.mark(profile_.wo);
  rows(n, [&](int64_t r) {
    float* t = &tmp_[r * c.dim];
    if (c.post_norms) rmsnorm(t, static_cast<const float*>(w.attn_post_norm.data), t, 1, c.dim, eps);
    if (c.residual_scale != 1.0) scale_inplace(t, c.dim, static_cast<float>(c.residual_scale));
    add_inplace(&x_[r * c.dim], t, c.dim);
    rmsnorm(&x_[r * c.dim], static_cast<const float*>(w.ffn_norm.data), &xn_[r * c.dim], 1, c.dim, eps);
  });
  timer.mark(profile_.norm_rope_kv);
  if (moe_) {
    moe_->run(matmul_, w, xn_.data(), n, tmp_.data());
    timer.mark(profile_.ffn_up_gate);
  } else {
    dense_ffn(w, n);
    timer = PhaseTimer(profiling_);
  }
  rows(n, [&](int64_t r) {
    float* t = &tmp_[r * c.dim];
    if (c.post_norms) rmsnorm(t, static_cast<const float*>(w.ffn_post_norm.data), t, 1, c.dim, eps);
    if (c.residual_scale != 1.0) scale_inplace(t, c.dim, static_cast<float>(c.residual_scale));
    add_inplace(&x_[r * c.dim], t, c.dim);
  });
  timer.mark(profile_.norm_rope_kv);
}

void CpuBackend::dense_ffn(const LayerWeights& w, int64_t n) {
  const auto& c = config_;
  PhaseTimer timer(profiling_);
  const MatmulTarget ffn[] = {{&w.w_gate, gate_.data()}, {&w.w_up, up_.data()}};
  matmul_.run(xn_.data(), n, c.dim, ffn);
  timer.mark(profile_.ffn_up_gate);
  rows(n, [&](int64_t r) {
    float* g = &gate_[r * c.ffn_dim];
    if (c.gelu_ffn) gelu_tanh_mul(g, &up_[r * c.ffn_dim], g, c.ffn_dim);
    else silu_mul(g, &up_[r * c.ffn_dim], g, c.ffn_dim);
  });
  timer.mark(profile_.norm_rope_kv);
  matmul_.run(gate_.data(), n, w.w_down, tmp_.data());
  timer.mark(profile_.ffn_down);
}

void CpuBackend::forward(const ForwardBatch& b, std::vector<float>& logits) {
  check_batch(b);
  const auto& c = config_;
  const int64_t n = static_cast<int64_t>(b.size());
  logits.resize(b.logit_rows.size() * static_cast<size_t>(c.vocab_size));
  if (n == 0) return;
  resize_scratch(n);
  PhaseTimer timer(profiling_);
  const int half = c.head_dim / 2;
  rows(n, [&](int64_t r) {
    float* x = &x_[r * c.dim];
    embed_rows(weights_.token_embd, &b.tokens[r], 1, x);
    if (c.embed_scale != 1.0f) scale_inplace(x, c.dim, c.embed_scale);
    rope_.angles(b.positions[r], &cos_[r * half], &sin_[r * half]);
    if (c.sliding_window > 0) rope_local_.angles(b.positions[r], &cos_local_[r * half], &sin_local_[r * half]);
  });
  timer.mark(profile_.embed);
  layers(b);
  timer = PhaseTimer(profiling_);

  const int64_t n_out = static_cast<int64_t>(b.logit_rows.size());
  if (n_out == 0) return;
  if (out_rows_.size() < static_cast<size_t>(n_out * c.dim)) out_rows_.resize(static_cast<size_t>(n_out * c.dim));
  for (int64_t i = 0; i < n_out; ++i)
    rmsnorm(&x_[static_cast<size_t>(b.logit_rows[i]) * c.dim], static_cast<const float*>(weights_.output_norm.data),
            &out_rows_[i * c.dim], 1, c.dim, static_cast<float>(c.rms_eps));
  matmul_.run(out_rows_.data(), n_out, weights_.output, logits.data());
  if (c.logit_scale != 1.0)
    scale_inplace(logits.data(), static_cast<int64_t>(logits.size()), static_cast<float>(1.0 / c.logit_scale));
  if (c.final_softcap > 0)
    softcap_inplace(logits.data(), static_cast<int64_t>(logits.size()), static_cast<float>(c.final_softcap));
  timer.mark(profile_.logits);
}

void CpuBackend::layers(const ForwardBatch& b) {
  for (int l = 0; l < config_.n_layers; ++l) {
    wait_for_layer(l);
    layer(b, l);
  }
}

void CpuBackend::wait_for_layer(int l) {
  PhaseTimer timer(profiling_);
  MutexLock lock(ready_mutex_);
  lock.wait(ready_cv_, [&]() REQUIRES(ready_mutex_) { return layers_ready_ < 0 || layers_ready_ > l; });
  lock.unlock();
  timer.mark(profile_.kv_wait);
}

void CpuBackend::forward_after(std::span<const KvOp> ops, const ForwardBatch& b, std::vector<float>& logits) {
  if (!pipeline_kv_ops_ || ops.empty()) {
    Backend::forward_after(ops, b, logits);
    return;
  }
  for (const KvOp& op : ops) kv_.check(op);  // refuse a bad plan before touching a byte
  const int n_layers = config_.n_layers;
  {
    MutexLock g(ready_mutex_);
    layers_ready_ = 0;
  }
  std::exception_ptr copy_error;
  std::thread copier([&] {
    for (int l = 0; l < n_layers; ++l) {
      try {
        for (const KvOp& op : ops) kv_.run_layer(op, l);
      } catch (...) {
        copy_error = std::current_exception();
        l = n_layers - 1;  // release every waiting layer
      }
      {
        MutexLock g(ready_mutex_);
        layers_ready_ = l + 1;
      }
      ready_cv_.notify_all();
    }
  });
  // Joined however forward() ends: the copies finish either way, as they would
  // have before a forward pass that throws.
  struct Join {
    CpuBackend& self;
    std::thread& t;
    ~Join() {
      t.join();
      MutexLock g(self.ready_mutex_);
      self.layers_ready_ = -1;
    }
  };
  {
    Join join{*this, copier};
    forward(b, logits);
  }
  if (copy_error) std::rethrow_exception(copy_error);
}

}  // namespace seer
