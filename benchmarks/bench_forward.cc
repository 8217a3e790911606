// bench_forward: CPU forward-pass throughput against bounds measured in the same run.
//   1. memory copy bandwidth (large memcpy on all threads; bytes read + written per s,
//      as STREAM counts a copy) and read-only bandwidth for reference;
//   2. peak sgemm FLOP/s of OpenBLAS (2048^3, all threads);
//   3. random llama-125m / llama-1b weights (in memory) in F16 and Q8_0: prefill tok/s
//      (chunks of 512) against FLOPs / peak, decode tok/s at batch 1, 8, 32 with
//      contexts 128 and 1024 against max(bytes / bandwidth, FLOPs / peak), where bytes
//      = weights + the K/V read per step.
// Architecture cases: a shape NAME+moeExK is a mixture of E experts (K per token, each
// of FFN size ffn/K), NAME+swaW has a sliding window of W on five layers of six; the
// bounds count the experts and K/V positions a step actually reads.
// Usage: bench_forward [--shapes llama-125m,llama-1b] [--types f16,q8_0,q4_k_m,q5_k_m,...] [--kv-types f16] [--batches 1,8,32]
//                      [--contexts 128,1024] [--prefill 1024] [--threads N] [--repeats N] [--profile]
//                      [--matmul] [--matmul-types f32,f16,q8_0,q4_k,...] [--json]
// --json: one JSON object per case on stdout ({"shape","type","kv_type","phase","batch","context","tokens_per_s",
// "bound_tokens_per_s","percent_of_bound","op_roofline_tokens_per_s","percent_of_op_roofline"}), the table goes
// to stderr. The op roofline sums each op's own max(bytes / bandwidth, FLOPs / peak) (see Row).
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "backend/cpu_backend.h"
#include "kernels/kernel_level.h"
#include "kernels/matmul.h"
#include "model/kv_type.h"
#include "model/quant.h"
#include "model/random_model.h"

#include "bench_args.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using bench_args::split;

struct Options {
  std::vector<std::string> shapes = {"llama-125m", "llama-1b"};
  std::vector<std::string> types = {"f16", "q8_0"};
  std::vector<std::string> kv_types = {kv_type_name(kDefaultKvType)};
  std::vector<int> batches = {1, 8, 32};
  std::vector<int> contexts = {128, 1024};
  int prefill_tokens = 1024;
  int chunk = 512;
  int threads = 0;
  bool profile = false;
  bool matmul_sweep = false;
  std::vector<std::string> matmul_types = {"f32", "f16", "bf16", "q8_0", "q4_0"};
  int repeats = 3;  // decode: best of this many timed runs
  bool json = false;
};

// ---- Bounds measured on the spot.

template <class F>
void on_threads(int threads, F&& fn) {
  std::vector<std::thread> ts;
  for (int t = 1; t < threads; ++t) ts.emplace_back([&, t] { fn(t); });
  fn(0);
  for (auto& t : ts) t.join();
}

struct Bandwidth {
  double copy = 0;  // (read + write) bytes / s
  double read = 0;
};

Bandwidth measure_bandwidth(int threads) {
  const size_t bytes = size_t{512} << 20;
  std::vector<char> src(bytes, 1), dst(bytes, 2);
  Bandwidth bw;
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = Clock::now();
    on_threads(threads, [&](int t) {
      const size_t part = bytes / threads;
      std::memcpy(dst.data() + t * part, src.data() + t * part, part);
    });
    bw.copy = std::max(bw.copy, 2.0 * bytes / since(t0));
  }
  std::vector<double> sums(threads);
  for (int rep = 0; rep < 10; ++rep) {
    auto t0 = Clock::now();
    on_threads(threads, [&](int t) {
      const size_t part = bytes / threads / sizeof(uint64_t);
      const auto* p = reinterpret_cast<const uint64_t*>(src.data()) + t * part;
      uint64_t a = 0, b = 0, c = 0, d = 0;
      for (size_t i = 0; i + 4 <= part; i += 4) {
        a += p[i];
        b += p[i + 1];
        c += p[i + 2];
        d += p[i + 3];
      }
      sums[t] = static_cast<double>(a + b + c + d);
    });
    bw.read = std::max(bw.read, bytes / since(t0));
  }
  return bw;
}

double measure_sgemm_peak(int threads) {
  const int n = 2048;
  std::vector<float> a(size_t{n} * n, 0.5f), b(size_t{n} * n, 0.25f), c(size_t{n} * n);
  openblas_set_num_threads(threads);
  double best = 0;
  for (int rep = 0; rep < 4; ++rep) {
    auto t0 = Clock::now();
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, n, n, 1.0f, a.data(), n, b.data(), n, 0.0f, c.data(), n);
    best = std::max(best, 2.0 * n * n * n / since(t0));
  }
  openblas_set_num_threads(1);  // the backend parallelizes itself
  return best;
}

// ---- Random weights in memory.

struct RandomWeights {
  ModelConfig config;
  ModelWeights weights;
  std::vector<std::unique_ptr<uint8_t[]>> storage;
  size_t matrix_bytes = 0;  // read per decode step (all matrices but the embedding)
  int64_t matrix_params = 0;  // used per token (FLOPs): with experts, the router and experts_used experts
  // Mixture of experts: the bytes of one expert (all layers); matrix_bytes counts
  // none of them, read_bytes(batch) adds those the batch's tokens touch.
  size_t expert_bytes = 0;
  // Expected matrix bytes read by one decode step of `batch` tokens (experts chosen
  // independently and uniformly: E (1 - (1 - used/E)^batch) distinct ones).
  double read_bytes(int batch) const {
    if (config.n_experts == 0) return static_cast<double>(matrix_bytes);
    const double e = config.n_experts, used = config.n_experts_used;
    return static_cast<double>(matrix_bytes) + e * (1.0 - std::pow(1.0 - used / e, batch)) * expert_bytes;
  }
};

// Shape variants for the architecture cases: NAME+moeExK (a mixture of E experts,
// K per token, each of FFN size ffn/K so the active FLOPs match the dense shape) and
// NAME+swaW (sliding window of W positions on five layers of six, as Gemma 3).
struct ShapeVariant {
  ModelShape shape;
  int experts = 0, experts_used = 0, window = 0;
};

std::optional<ShapeVariant> parse_shape(const std::string& name) {
  const size_t plus = name.find('+');
  auto base = named_model_shape(name.substr(0, plus));
  if (!base) return std::nullopt;
  ShapeVariant v{*base};
  if (plus == std::string::npos) return v;
  const std::string var = name.substr(plus + 1);
  if (var.rfind("moe", 0) == 0 && var.find('x') != std::string::npos) {
    v.experts = std::stoi(var.substr(3));
    v.experts_used = std::stoi(var.substr(var.find('x') + 1));
    if (v.experts < 2 || v.experts_used < 1 || v.experts_used > v.experts) return std::nullopt;
    v.shape.ffn_dim /= v.experts_used;
  } else if (var.rfind("swa", 0) == 0) {
    v.window = std::stoi(var.substr(3));
    if (v.window < 1) return std::nullopt;
  } else {
    return std::nullopt;
  }
  return v;
}

// Attention FLOPs of one token at context ctx over all layers (sliding-window layers
// see at most their window), and the K/V positions it reads per layer on average.
double visible_positions(const ModelConfig& c, double ctx) {
  double sum = 0;
  for (int l = 0; l < c.n_layers; ++l) sum += c.layer_is_local(l) ? std::min<double>(ctx, c.sliding_window) : ctx;
  return sum / c.n_layers;
}

WeightTensor fill(RandomWeights& m, const std::string& name, int64_t rows, int64_t cols, GgmlType type, int threads,
                  uint64_t seed, bool norm = false) {
  const size_t row_bytes = ggml_row_bytes(type, cols);
  auto buf = std::make_unique<uint8_t[]>(row_bytes * rows);
  uint8_t* base = buf.get();
  const float scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(cols)));
  // The searching quantizers of the K-quants and IQ types take minutes for a whole
  // model: quantize kDistinctRows rows and repeat them (timing does not depend on
  // the values; every row still has its own memory).
  constexpr int64_t kDistinctRows = 512;
  const bool fast_quantizer = type == GgmlType::F32 || type == GgmlType::F16 || type == GgmlType::BF16 ||
                              type == GgmlType::Q8_0 || type == GgmlType::Q4_0;
  const int64_t distinct = fast_quantizer ? rows : std::min(rows, kDistinctRows);
  on_threads(threads, [&](int t) {
    std::vector<float> src(cols);
    for (int64_t r = t; r < distinct; r += threads) {
      uint64_t s = seed * 0x9e3779b97f4a7c15ull + static_cast<uint64_t>(r) * 0xbf58476d1ce4e5b9ull + 1;
      for (auto& v : src) {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        v = norm ? 1.0f : scale * (static_cast<float>(s >> 40) / 8388608.0f - 1.0f);
      }
      quantize_row(type, src.data(), base + r * row_bytes, cols);
    }
  });
  on_threads(threads, [&](int t) {
    for (int64_t r = distinct + t; r < rows; r += threads)
      std::memcpy(base + r * row_bytes, base + (r % distinct) * row_bytes, row_bytes);
  });
  WeightTensor w{name, type, rows, cols, base, row_bytes * rows};
  m.storage.push_back(std::move(buf));
  return w;
}

// A weight type for every matrix, or llama-quantize's Q4_K_M / Q5_K_M recipe for llama
// models: Q4_K / Q5_K, with Q6_K for the output matrix and for attn_v and ffn_down in
// the layers its use_more_bits rule picks (the first and last eighth and every third in between).
struct WeightRecipe {
  GgmlType type = GgmlType::F16;
  bool k_m = false;  // the _M mix around `type`

  GgmlType matrix_type(const std::string& name, int layer, int n_layers) const {
    if (!k_m) return type;
    const bool more_bits = layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
    if (name == "output.weight") return GgmlType::Q6_K;
    if ((name == "attn_v" || name == "ffn_down") && more_bits) return GgmlType::Q6_K;
    return type;
  }
};

std::optional<WeightRecipe> parse_recipe(const std::string& name) {
  if (name == "q4_k_m" || name == "Q4_K_M") return WeightRecipe{GgmlType::Q4_K, true};
  if (name == "q5_k_m" || name == "Q5_K_M") return WeightRecipe{GgmlType::Q5_K, true};
  auto t = ggml_type_from_name(name);
  if (!t) return std::nullopt;
  return WeightRecipe{*t, false};
}

std::unique_ptr<RandomWeights> make_weights(const ShapeVariant& v, const WeightRecipe& recipe, int threads) {
  const ModelShape& s = v.shape;
  auto m = std::make_unique<RandomWeights>();
  ModelConfig& c = m->config;
  c.name = s.name;
  c.n_layers = s.n_layers;
  c.dim = s.dim;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.dim / s.n_heads;
  c.ffn_dim = s.ffn_dim;
  c.vocab_size = s.vocab_size;
  c.context_length = std::max(s.context_length, 4096);
  c.rope_base = s.rope_base;
  c.rms_eps = s.rms_eps;
  c.n_experts = v.experts;
  c.n_experts_used = v.experts_used;
  c.sliding_window = v.window;
  c.swa_period = v.window > 0 ? 6 : 0;
  const int64_t q_dim = int64_t{c.n_heads} * c.head_dim, kv_dim = int64_t{c.n_kv_heads} * c.head_dim;
  uint64_t seed = 1;
  auto matrix = [&](const std::string& name, int64_t rows, int64_t cols, int layer = -1) {
    const GgmlType type = recipe.matrix_type(name, layer, c.n_layers);
    WeightTensor w = fill(*m, name, rows, cols, type, threads, seed++);
    if (name != "token_embd.weight") {
      m->matrix_bytes += w.bytes;
      m->matrix_params += rows * cols;
    }
    return w;
  };
  auto norm = [&](const std::string& name) { return fill(*m, name, 1, c.dim, GgmlType::F32, threads, seed++, true); };
  ModelWeights& w = m->weights;
  w.token_embd = matrix("token_embd.weight", c.vocab_size, c.dim);
  w.output_norm = norm("output_norm.weight");
  w.output = matrix("output.weight", c.vocab_size, c.dim);
  for (int l = 0; l < c.n_layers; ++l) {
    LayerWeights L;
    L.attn_norm = norm("attn_norm");
    L.wq = matrix("attn_q", q_dim, c.dim, l);
    L.wk = matrix("attn_k", kv_dim, c.dim, l);
    L.wv = matrix("attn_v", kv_dim, c.dim, l);
    L.wo = matrix("attn_output", c.dim, q_dim, l);
    L.ffn_norm = norm("ffn_norm");
    if (c.n_experts > 0) {
      L.router = fill(*m, "ffn_gate_inp", c.n_experts, c.dim, GgmlType::F32, threads, seed++);
      m->matrix_bytes += L.router.bytes;
      m->matrix_params += int64_t{c.n_experts} * c.dim;
      const int64_t e = c.n_experts;
      L.gate_exps = fill(*m, "ffn_gate_exps", c.ffn_dim * e, c.dim, recipe.type, threads, seed++);
      L.up_exps = fill(*m, "ffn_up_exps", c.ffn_dim * e, c.dim, recipe.type, threads, seed++);
      L.down_exps = fill(*m, "ffn_down_exps", c.dim * e, c.ffn_dim, recipe.type, threads, seed++);
      m->expert_bytes += (L.gate_exps.bytes + L.up_exps.bytes + L.down_exps.bytes) / e;
      m->matrix_params += 3 * int64_t{c.ffn_dim} * c.dim * c.n_experts_used;
    } else {
      L.w_gate = matrix("ffn_gate", c.ffn_dim, c.dim, l);
      L.w_up = matrix("ffn_up", c.ffn_dim, c.dim, l);
      L.w_down = matrix("ffn_down", c.dim, c.ffn_dim, l);
    }
    w.layers.push_back(L);
  }
  return m;
}

// ---- Measurements.

struct Row {
  std::string what;
  double tok_s;
  double bound_tok_s;
  const char* bound_kind;
  const char* phase;  // "prefill" or "decode"
  int batch;
  int context;
  // The ops run one after another, so the step cannot beat the sum of each op's own
  // roofline: max(bytes / bandwidth, FLOPs / peak) of the weight matmuls plus that of
  // attention over the K/V. max() over the whole step (bound_tok_s) assumes weight
  // FLOPs and K/V reads overlap, which no sequential layer does. 0: same as bound_tok_s.
  double op_roofline_tok_s = 0;
};

// Attention FLOPs of one token at context length ctx (QK^T and PV over all heads).
double attention_flops(const ModelConfig& c, double ctx) {
  return 4.0 * c.n_layers * c.n_heads * c.head_dim * visible_positions(c, ctx);
}

void print_profile(const CpuBackend::Profile& p, double wall, FILE* out) {
  std::fprintf(out, "      profile: qkv %.0f%%  attention %.0f%%  wo %.0f%%  ffn gate+up %.0f%%  ffn down %.0f%%  "
              "norm/rope/kv/silu %.0f%%  logits %.0f%%  embed %.0f%%  (timed %.0f%% of wall)\n",
              100 * p.qkv / p.total(), 100 * p.attention / p.total(), 100 * p.wo / p.total(),
              100 * p.ffn_up_gate / p.total(), 100 * p.ffn_down / p.total(), 100 * p.norm_rope_kv / p.total(),
              100 * p.logits / p.total(), 100 * p.embed / p.total(), 100 * p.total() / wall);
}

Row bench_prefill(const RandomWeights& m, const Options& o, KvType kv_type, double peak) {
  const ModelConfig& c = m.config;
  const int n = o.prefill_tokens;
  CpuBackendOptions bo;
  bo.threads = o.threads;
  bo.kv.type = kv_type;
  bo.kv.device_blocks = (n + 15) / 16;
  CpuBackend be(c, m.weights, bo);
  ForwardSequence seq;
  for (int b = 0; b < bo.kv.device_blocks; ++b) seq.block_table.push_back(b);
  std::vector<float> logits;
  auto run = [&] {
    for (int p0 = 0; p0 < n; p0 += o.chunk) {
      ForwardBatch b;
      b.sequences.push_back(seq);
      const int p1 = std::min(n, p0 + o.chunk);
      for (int p = p0; p < p1; ++p) b.add(0, (p * 7919) % c.vocab_size, p, p + 1 == p1);
      be.forward(b, logits);
    }
  };
  {  // warm-up: one chunk
    ForwardBatch b;
    b.sequences.push_back(seq);
    for (int p = 0; p < std::min(n, o.chunk); ++p) b.add(0, p % c.vocab_size, p, false);
    be.forward(b, logits);
  }
  be.set_profiling(o.profile);
  auto t0 = Clock::now();
  run();
  const double s = since(t0);
  if (o.profile) print_profile(be.profile(), s, o.json ? stderr : stdout);
  double flops = 2.0 * static_cast<double>(m.matrix_params - int64_t{c.vocab_size} * c.dim) * n;
  flops += 2.0 * c.vocab_size * c.dim * ((n + o.chunk - 1) / o.chunk);  // one logits row per chunk
  for (int p = 0; p < n; ++p) flops += attention_flops(c, p + 1);
  return {"prefill " + std::to_string(n) + " tok, chunks of " + std::to_string(o.chunk),
          n / s,
          n / (flops / peak),
          "FLOP",
          "prefill",
          o.chunk,
          n};
}

Row bench_decode(const RandomWeights& m, const Options& o, KvType kv_type, int batch, int ctx, const Bandwidth& bw,
                 double peak) {
  const ModelConfig& c = m.config;
  const int bs = 16;
  // Bytes and FLOPs of one step give the bound, and the number of steps to time
  // (about 0.3 s per repeat; the best of three repeats is reported).
  const double kv_token = static_cast<double>(kv_bytes_per_token(c, kv_type));
  const double est_mem = (m.read_bytes(batch) + kv_token * batch * visible_positions(c, ctx)) / bw.copy;
  const double est_flop = batch * (2.0 * static_cast<double>(m.matrix_params) + attention_flops(c, ctx)) / peak;
  const int steps = std::clamp(static_cast<int>(0.3 / std::max(est_mem, est_flop)), 3, 64);
  const int repeats = o.repeats;
  const int per_seq = (ctx + repeats * steps + 1 + bs - 1) / bs;
  CpuBackendOptions bo;
  bo.threads = o.threads;
  bo.kv.block_size = bs;
  bo.kv.device_blocks = per_seq * batch;
  bo.kv.type = kv_type;
  CpuBackend be(c, m.weights, bo);
  // Fill the contexts' K/V with data (never-touched pages would all read one zero page).
  std::vector<float> kvec(static_cast<size_t>(c.n_kv_heads) * c.head_dim, 0.01f);
  std::vector<ForwardSequence> seqs(batch);
  for (int s = 0; s < batch; ++s) {
    for (int b = 0; b < per_seq; ++b) seqs[s].block_table.push_back(s * per_seq + b);
    for (int p = 0; p < ctx; ++p)
      for (int l = 0; l < c.n_layers; ++l)
        be.kv_storage().write(seqs[s].block_table[p / bs], p % bs, l, kvec.data(), kvec.data());
  }
  std::vector<float> logits;
  auto step = [&](int pos) {
    ForwardBatch b;
    b.sequences = seqs;
    for (int s = 0; s < batch; ++s) b.add(s, (s * 31 + pos) % c.vocab_size, pos, true);
    be.forward(b, logits);
  };
  step(ctx);  // warm-up
  int pos = ctx + 1;
  double best = 1e30;
  CpuBackend::Profile best_profile;
  for (int r = 0; r < repeats; ++r) {
    be.reset_profile();
    be.set_profiling(o.profile);
    auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) step(pos++);
    const double s = since(t0);
    if (s < best) {
      best = s;
      best_profile = be.profile();
    }
  }
  if (o.profile) print_profile(best_profile, best, o.json ? stderr : stdout);
  const double mean_ctx = ctx + 1 + repeats * steps / 2.0;
  const double kv_bytes = static_cast<double>(be.kv_bytes_per_token()) * batch * visible_positions(c, mean_ctx);
  const double mem_time = (m.read_bytes(batch) + kv_bytes) / bw.copy;
  const double flops = batch * (2.0 * static_cast<double>(m.matrix_params) + attention_flops(c, mean_ctx));
  const double flop_time = flops / peak;
  const double bound_time = std::max(mem_time, flop_time);
  const double matmul_time = std::max(m.read_bytes(batch) / bw.copy,
                                      batch * 2.0 * static_cast<double>(m.matrix_params) / peak);
  const double attention_time = std::max(kv_bytes / bw.copy, batch * attention_flops(c, mean_ctx) / peak);
  return {"decode batch " + std::to_string(batch) + ", context " + std::to_string(ctx),
          batch * steps / best,
          batch / bound_time,
          mem_time >= flop_time ? "memory" : "FLOP",
          "decode",
          batch,
          ctx,
          batch / (matmul_time + attention_time)};
}

void matmul_sweep(int threads, const std::vector<std::string>& types) {
  ThreadPool pool(threads);
  MatmulContext ctx(pool);
  const int64_t m = 8192, k = 2048;  // 32 MiB in F16: streams from memory, not from L3
  for (const auto& name : types) {
    const auto type = ggml_type_from_name(name);
    if (!type) throw std::runtime_error("unknown type " + name);
    const GgmlType t = *type;
    RandomWeights rw;
    WeightTensor w = fill(rw, "w", m, k, t, threads, 3);
    for (int64_t n : {1, 2, 4, 8, 16, 32, 64, 128}) {
      std::vector<float> x(n * k, 0.1f), y(n * m);
      std::printf("  %-5s %2s n=%4lld:", std::string(ggml_type_name(t)).c_str(), "", static_cast<long long>(n));
      for (MatmulPath p : {MatmulPath::Dot, MatmulPath::Gemm}) {
        ctx.set_path(p);
        ctx.run(x.data(), n, w, y.data());
        const int reps = std::max(2, static_cast<int>(64 / n));
        auto t0 = Clock::now();
        for (int i = 0; i < reps; ++i) ctx.run(x.data(), n, w, y.data());
        const double s = since(t0) / reps;
        std::printf("  %s %8.3f ms %6.1f GFLOP/s %5.1f GB/s", p == MatmulPath::Dot ? "dot" : "gemm", s * 1e3,
                    2.0 * n * m * k / s * 1e-9, w.bytes / s * 1e-9);
      }
      std::printf("   (auto: %s)\n", n >= MatmulContext::gemm_min_batch(t) ? "gemm" : "dot");
    }
  }
}

double op_roofline(const Row& r) { return r.op_roofline_tok_s > 0 ? r.op_roofline_tok_s : r.bound_tok_s; }

void print_json(const Row& r, const std::string& shape, const std::string& type, KvType kv_type) {
  std::printf("{\"shape\":\"%s\",\"type\":\"%s\",\"kv_type\":\"%s\",\"phase\":\"%s\",\"batch\":%d,"
              "\"context\":%d,\"tokens_per_s\":%.2f,\"bound_tokens_per_s\":%.2f,\"percent_of_bound\":%.1f,"
              "\"op_roofline_tokens_per_s\":%.2f,\"percent_of_op_roofline\":%.1f}\n",
              shape.c_str(), type.c_str(), kv_type_name(kv_type), r.phase, r.batch,
              r.context, r.tok_s, r.bound_tok_s, 100.0 * r.tok_s / r.bound_tok_s, op_roofline(r),
              100.0 * r.tok_s / op_roofline(r));
  std::fflush(stdout);
}

int run(const Options& o) {
  const int threads = o.threads > 0 ? o.threads : static_cast<int>(std::thread::hardware_concurrency());
  // With --json the table goes to stderr and stdout carries only JSON lines.
  FILE* out = o.json ? stderr : stdout;
  std::fprintf(out, "bench_forward: %d threads\n", threads);
  std::fprintf(out, "cpu: %s\n", cpu_summary_line().c_str());
  const Bandwidth bw = measure_bandwidth(threads);
  const double peak = measure_sgemm_peak(threads);
  std::fprintf(out, "memory copy bandwidth: %.1f GB/s (bytes read + written); read-only: %.1f GB/s\n",
               bw.copy * 1e-9, bw.read * 1e-9);
  std::fprintf(out, "OpenBLAS sgemm peak (2048^3, %d threads): %.1f GFLOP/s\n\n", threads, peak * 1e-9);
  if (o.matmul_sweep) {
    std::printf("matmul 8192x2048 weight, dot vs gemm path:\n");
    matmul_sweep(threads, o.matmul_types);
    std::printf("\n");
  }
  std::vector<KvType> kv_types;
  for (const auto& name : o.kv_types) kv_types.push_back(parse_kv_type(name, "--kv-types"));
  std::fprintf(out, "%-11s %-6s %-4s %-38s %10s %12s %8s  %-8s %10s\n", "shape", "type", "kv", "measurement",
               "tok/s", "bound tok/s", "% bound", "bound by", "% op roof");
  for (const auto& shape_name : o.shapes) {
    auto shape = parse_shape(shape_name);
    if (!shape) {
      std::fprintf(stderr, "unknown shape %s (a named shape, optionally +moeExK or +swaW)\n", shape_name.c_str());
      return 1;
    }
    for (const auto& type_name : o.types) {
      auto recipe = parse_recipe(type_name);
      if (!recipe) {
        std::fprintf(stderr, "unknown type %s\n", type_name.c_str());
        return 1;
      }
      auto t0 = Clock::now();
      auto m = make_weights(*shape, *recipe, threads);
      std::string type_label = recipe->k_m ? std::string(ggml_type_name(recipe->type)) + "_M" : std::string(ggml_type_name(recipe->type));
      std::fprintf(stderr, "[%s %s: %.0f MiB of matrices generated in %.1f s]\n", shape_name.c_str(),
                   type_name.c_str(),
                   (m->matrix_bytes + m->expert_bytes * std::max(1, m->config.n_experts)) / 1048576.0, since(t0));
      for (KvType kv : kv_types) {
        auto print = [&](const Row& r) {
          std::fprintf(out, "%-11s %-6s %-4s %-38s %10.1f %12.1f %7.0f%%  %-8s %9.0f%%\n", shape_name.c_str(),
                       type_label.c_str(), kv_type_name(kv), r.what.c_str(), r.tok_s,
                       r.bound_tok_s, 100.0 * r.tok_s / r.bound_tok_s, r.bound_kind, 100.0 * r.tok_s / op_roofline(r));
          std::fflush(out);
          if (o.json) print_json(r, shape_name, type_label, kv);
        };
        if (o.prefill_tokens > 0) print(bench_prefill(*m, o, kv, peak));
        for (int ctx : o.contexts)
          for (int b : o.batches) print(bench_decode(*m, o, kv, b, ctx, bw, peak));
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  seer::Options o;
  auto ints = [](const std::string& s) {
    std::vector<int> v;
    for (const auto& x : seer::split(s)) v.push_back(std::stoi(x));
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--shapes") o.shapes = seer::split(value());
    else if (a == "--types") o.types = seer::split(value());
    else if (a == "--kv-types") o.kv_types = seer::split(value());
    else if (a == "--repeats") o.repeats = std::max(1, std::stoi(value()));
    else if (a == "--json") o.json = true;
    else if (a == "--batches") o.batches = ints(value());
    else if (a == "--contexts") o.contexts = ints(value());
    else if (a == "--prefill") o.prefill_tokens = std::stoi(value());
    else if (a == "--chunk") o.chunk = std::stoi(value());
    else if (a == "--threads") o.threads = std::stoi(value());
    else if (a == "--profile") o.profile = true;
    else if (a == "--matmul") o.matmul_sweep = true;
    else if (a == "--matmul-types") o.matmul_types = seer::split(value());
    else {
      std::fprintf(stderr,
                   "usage: bench_forward [--shapes llama-125m,llama-1b] [--types f16,q8_0,q4_k,q4_k_m,q5_k_m,...] [--kv-types f32,f16,bf16] "
                   "[--batches 1,8,32] [--contexts 128,1024] [--prefill 1024 (0: none)] [--chunk 512] [--threads N] "
                   "[--repeats 3] [--profile] [--matmul] [--matmul-types f32,f16,bf16,q8_0,q4_0] [--json]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  try {
    return seer::run(o);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_forward: %s\n", e.what());
    return 1;
  }
}
