#include "model/random_model.h"

#include <algorithm>
#include <cmath>
#include <thread>

#include "common/error.h"
#include "common/progress.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/model_config.h"
#include "model/quant.h"
#include "model/synthetic_vocab.h"

namespace seer {
namespace {

const ModelShape kShapes[] = {
    {"tiny", 2, 64, 4, 2, 192, kByteVocabSize, 512, 10000.0, 1e-5},
    {"llama-125m", 12, 768, 12, 12, 2048, 32000, 2048, 10000.0, 1e-5},
    {"llama-1b", 22, 2048, 32, 4, 5632, 32000, 2048, 10000.0, 1e-5},
    {"llama-2-7b", 32, 4096, 32, 32, 11008, 32000, 4096, 10000.0, 1e-5},
    {"mistral-7b", 32, 4096, 32, 8, 14336, 32000, 32768, 1000000.0, 1e-5},
};

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// xoshiro256+ : fast, and its weak low bits are dropped when making floats.
struct Rng {
  uint64_t s[4];
  explicit Rng(uint64_t seed) {
    for (auto& x : s) x = splitmix64(seed);
  }
  uint64_t next() {
    const uint64_t result = s[0] + s[3];
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
  }
};

// One tensor of the model: its name, shape {cols, rows} and how to fill it.
struct TensorPlan {
  enum class Fill { kMatrix, kNorm, kValues };
  std::string name;
  int64_t rows, cols;
  GgmlType type;
  Fill fill;
  std::vector<float> values = {};  // kValues
  int64_t experts = 0;             // > 0: written as {cols, rows / experts, experts}
};

int head_dim_of(const ModelShape& s) { return s.head_dim > 0 ? s.head_dim : s.dim / s.n_heads; }

std::vector<TensorPlan> plan_tensors(const ModelShape& s, const RandomModelOptions& opt) {
  const int64_t head_dim = head_dim_of(s);
  const int64_t q_dim = head_dim * s.n_heads, kv_dim = head_dim * s.n_kv_heads;
  const bool gemma = opt.arch == "gemma2" || opt.arch == "gemma3";
  const bool qk_norm = opt.arch == "qwen3" || opt.arch == "gemma3" || opt.arch == "qwen3moe";
  const bool fused = opt.arch == "phi3";
  const int64_t rope_dim = opt.rope_dim > 0 ? opt.rope_dim : head_dim;
  std::vector<TensorPlan> t;
  auto matrix = [&](std::string name, int64_t rows, int64_t cols) {
    auto it = opt.tensor_types.find(name);
    const GgmlType type = it == opt.tensor_types.end() ? opt.type : it->second;
    t.push_back({std::move(name), rows, cols, type, TensorPlan::Fill::kMatrix});
  };
  auto norm = [&](std::string name, int64_t n) {
    t.push_back({std::move(name), 1, n, GgmlType::F32, TensorPlan::Fill::kNorm});
  };
  matrix("token_embd.weight", s.vocab_size, s.dim);
  if (opt.llama3_rope)
    t.push_back({"rope_freqs.weight", 1, head_dim / 2, GgmlType::F32, TensorPlan::Fill::kValues,
                 llama3_rope_divisors(static_cast<int>(head_dim), s.rope_base)});
  if (opt.longrope) {
    std::vector<float> long_factors(static_cast<size_t>(rope_dim / 2)), short_factors(long_factors.size());
    for (size_t i = 0; i < long_factors.size(); ++i) {
      const float x = static_cast<float>(i) / static_cast<float>(long_factors.size());
      long_factors[i] = 1.0f + 15.0f * x * x;
      short_factors[i] = 1.0f + 0.5f * x;
    }
    t.push_back({"rope_factors_long.weight", 1, rope_dim / 2, GgmlType::F32, TensorPlan::Fill::kValues, long_factors});
    t.push_back(
        {"rope_factors_short.weight", 1, rope_dim / 2, GgmlType::F32, TensorPlan::Fill::kValues, short_factors});
  }
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    norm(p + "attn_norm.weight", s.dim);
    if (fused) {
      matrix(p + "attn_qkv.weight", q_dim + 2 * kv_dim, s.dim);
    } else {
      matrix(p + "attn_q.weight", q_dim, s.dim);
      matrix(p + "attn_k.weight", kv_dim, s.dim);
      matrix(p + "attn_v.weight", kv_dim, s.dim);
    }
    if (opt.arch == "qwen2") {  // Q/K/V biases (F32, as llama.cpp's converter keeps 1-D tensors)
      t.push_back({p + "attn_q.bias", 1, q_dim, GgmlType::F32, TensorPlan::Fill::kMatrix});
      t.push_back({p + "attn_k.bias", 1, kv_dim, GgmlType::F32, TensorPlan::Fill::kMatrix});
      t.push_back({p + "attn_v.bias", 1, kv_dim, GgmlType::F32, TensorPlan::Fill::kMatrix});
    }
    if (qk_norm) {
      norm(p + "attn_q_norm.weight", head_dim);
      norm(p + "attn_k_norm.weight", head_dim);
    }
    matrix(p + "attn_output.weight", s.dim, q_dim);
    if (gemma) norm(p + "post_attention_norm.weight", s.dim);
    norm(p + "ffn_norm.weight", s.dim);
    if (opt.experts > 0) {
      t.push_back({p + "ffn_gate_inp.weight", opt.experts, s.dim, GgmlType::F32, TensorPlan::Fill::kMatrix});
      const int64_t e = opt.experts;
      t.push_back({p + "ffn_gate_exps.weight", s.ffn_dim * e, s.dim, opt.type, TensorPlan::Fill::kMatrix, {}, e});
      t.push_back({p + "ffn_up_exps.weight", s.ffn_dim * e, s.dim, opt.type, TensorPlan::Fill::kMatrix, {}, e});
      t.push_back({p + "ffn_down_exps.weight", s.dim * e, s.ffn_dim, opt.type, TensorPlan::Fill::kMatrix, {}, e});
    } else if (fused) {
      matrix(p + "ffn_up.weight", 2 * int64_t{s.ffn_dim}, s.dim);  // gate rows, then up rows
    } else {
      matrix(p + "ffn_gate.weight", s.ffn_dim, s.dim);
      matrix(p + "ffn_up.weight", s.ffn_dim, s.dim);
    }
    if (opt.experts == 0) matrix(p + "ffn_down.weight", s.dim, s.ffn_dim);
    if (gemma) norm(p + "post_ffw_norm.weight", s.dim);
  }
  norm("output_norm.weight", s.dim);
  if (!opt.tied_embeddings) matrix("output.weight", s.vocab_size, s.dim);
  return t;
}

void validate_type(GgmlType type, int64_t cols, const std::string& tensor) {
  auto info = ggml_type_info(static_cast<uint32_t>(type));
  if (!info || !info->computable)
    fail("make-model: type {} is not supported (use one of {})", ggml_type_name(type), computable_type_names());
  if (cols % info->block_elems != 0)
    fail("make-model: row length {} of {} is not a multiple of the {} block size {} (use a type with 32-element "
         "blocks, f32, f16 or bf16)",
         cols, tensor, info->name, info->block_elems);
}

void validate_shape(const ModelShape& s, bool byte_vocab) {
  if (s.head_dim < 0) fail("make-model: head dimension {} must be positive", s.head_dim);
  if (s.n_heads <= 0 || (s.head_dim == 0 && s.dim % s.n_heads != 0))
    fail("make-model: embedding size {} is not a multiple of the head count {}", s.dim, s.n_heads);
  ModelConfig c;
  c.n_layers = s.n_layers;
  c.dim = s.dim;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = head_dim_of(s);
  c.ffn_dim = s.ffn_dim;
  c.vocab_size = s.vocab_size;
  c.context_length = s.context_length;
  c.rope_base = s.rope_base;
  c.rms_eps = s.rms_eps;
  c.validate("make-model shape '" + s.name + "'");
  if (byte_vocab && s.vocab_size < kByteVocabSize)
    fail("make-model: vocabulary size {} is below the {} tokens of the byte-level tokenizer", s.vocab_size,
         kByteVocabSize);
}

// Fills rows [r0, r1) of `t` into `out` (already converted to t.type). Each row has its
// own generator seeded from (seed, tensor index, row), so the bytes do not depend on how
// rows are split among threads.
void fill_rows(const TensorPlan& t, uint64_t seed, size_t tensor_index, bool random_norms, int64_t r0, int64_t r1,
               uint8_t* out) {
  std::vector<float> row(static_cast<size_t>(t.cols));
  const size_t row_bytes = ggml_row_bytes(t.type, t.cols);
  const float scale = 1.0f / std::sqrt(static_cast<float>(t.cols));
  for (int64_t r = r0; r < r1; ++r) {
    uint64_t mix = seed ^ (uint64_t{tensor_index} << 40) ^ static_cast<uint64_t>(r);
    Rng rng(splitmix64(mix));
    // 24 high bits -> uniform in [0, 1).
    auto uniform = [&] { return static_cast<float>(rng.next() >> 40) * (1.0f / 16777216.0f); };
    if (t.fill == TensorPlan::Fill::kValues) {
      std::copy(t.values.begin(), t.values.end(), row.begin());
    } else if (t.fill == TensorPlan::Fill::kNorm) {
      for (auto& x : row) x = random_norms ? 0.75f + 0.5f * uniform() : 1.0f;
    } else {
      for (auto& x : row) x = (2.0f * uniform() - 1.0f) * scale;
    }
    quantize_row(t.type, row.data(), out + static_cast<size_t>(r - r0) * row_bytes, t.cols);
  }
}

}  // namespace

std::optional<ModelShape> named_model_shape(std::string_view name) {
  for (const auto& s : kShapes)
    if (s.name == name) return s;
  return std::nullopt;
}

std::vector<std::string> model_shape_names() {
  std::vector<std::string> names;
  for (const auto& s : kShapes) names.push_back(s.name);
  return names;
}

std::vector<std::string> random_model_architectures() { return {"llama", "qwen2", "qwen3", "gemma2", "gemma3", "phi3", "qwen3moe", "granite"}; }

std::vector<float> llama3_rope_divisors(int head_dim, double base, double factor, double low_freq_factor,
                                        double high_freq_factor, double original_context) {
  constexpr double kPi = 3.14159265358979323846;
  const double low_freq_wavelen = original_context / low_freq_factor;
  const double high_freq_wavelen = original_context / high_freq_factor;
  std::vector<float> divisors(static_cast<size_t>(head_dim / 2));
  for (int i = 0; i < head_dim / 2; ++i) {
    const double freq = 1.0 / std::pow(base, 2.0 * i / head_dim);
    const double wavelen = 2.0 * kPi / freq;
    double d = 1.0;  // short wavelengths keep their frequency
    if (wavelen > low_freq_wavelen) {
      d = factor;
    } else if (wavelen >= high_freq_wavelen) {
      const double smooth = (original_context / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      d = 1.0 / ((1.0 - smooth) / factor + smooth);
    }
    divisors[static_cast<size_t>(i)] = static_cast<float>(d);
  }
  return divisors;
}

uint32_t llama_file_type(GgmlType t) {
  switch (t) {
    case GgmlType::F32: return 0;
    case GgmlType::F16: return 1;
    case GgmlType::Q4_0: return 2;
    case GgmlType::Q4_1: return 3;
    case GgmlType::Q8_0: return 7;
    case GgmlType::Q5_0: return 8;
    case GgmlType::Q5_1: return 9;
    case GgmlType::Q2_K: return 10;
    case GgmlType::Q3_K: return 11;  // Q3_K_S: the recipe that is Q3_K nearly everywhere
    case GgmlType::Q4_K: return 14;  // Q4_K_S
    case GgmlType::Q5_K: return 16;  // Q5_K_S
    case GgmlType::Q6_K: return 18;
    case GgmlType::IQ4_NL: return 25;
    case GgmlType::IQ4_XS: return 30;
    case GgmlType::BF16: return 32;
    default: fail("no llama.cpp file type for {}", ggml_type_name(t));
  }
}

RandomModelSummary write_random_model(const std::string& path, const RandomModelOptions& opt) {
  ModelShape s = opt.shape;
  GgufWriter w;
  if (!opt.tokenizer_from.empty()) {
    auto src = GgufFile::open(opt.tokenizer_from);
    s.vocab_size = copy_tokenizer(w, *src);
  }
  validate_shape(s, /*byte_vocab=*/opt.tokenizer_from.empty());
  const auto archs = random_model_architectures();
  if (std::find(archs.begin(), archs.end(), opt.arch) == archs.end()) {
    std::string names;
    for (const auto& a : archs) names += (names.empty() ? "" : ", ") + a;
    fail("make-model: architecture '{}' is not one make-model writes (known: {})", opt.arch, names);
  }
  const std::vector<TensorPlan> plan = plan_tensors(s, opt);
  for (const auto& override_type : opt.tensor_types) {
    const std::string& name = override_type.first;  // clang 14 cannot capture a structured binding
    if (std::none_of(plan.begin(), plan.end(), [&](const TensorPlan& t) { return t.name == name; }))
      fail("make-model: no tensor '{}' to give type {}", name, ggml_type_name(override_type.second));
  }
  for (const auto& t : plan)
    if (t.fill == TensorPlan::Fill::kMatrix) validate_type(t.type, t.cols, t.name);
  const int head_dim = head_dim_of(s);
  const std::string ak = opt.arch + ".";

  w.set("general.architecture", gguf_string(opt.arch));
  w.set("general.name", gguf_string("random " + s.name + " (random weights)"));
  w.set("general.description",
        gguf_string(fmt::format("random weights written by seer make-model (seed {}); not a trained model",
                                opt.seed)));
  w.set("general.file_type", gguf_u32(llama_file_type(opt.type)));
  w.set(ak + "context_length", gguf_u32(static_cast<uint32_t>(s.context_length)));
  w.set(ak + "embedding_length", gguf_u32(static_cast<uint32_t>(s.dim)));
  w.set(ak + "block_count", gguf_u32(static_cast<uint32_t>(s.n_layers)));
  w.set(ak + "feed_forward_length", gguf_u32(static_cast<uint32_t>(s.ffn_dim)));
  w.set(ak + "attention.head_count", gguf_u32(static_cast<uint32_t>(s.n_heads)));
  w.set(ak + "attention.head_count_kv", gguf_u32(static_cast<uint32_t>(s.n_kv_heads)));
  w.set(ak + "rope.dimension_count", gguf_u32(static_cast<uint32_t>(opt.rope_dim > 0 ? opt.rope_dim : head_dim)));
  if (opt.longrope) {
    const double original = s.context_length / 2;
    w.set(ak + "rope.scaling.original_context_length", gguf_u32(static_cast<uint32_t>(original)));
    w.set(ak + "rope.scaling.attn_factor",
          gguf_f32(static_cast<float>(std::sqrt(1.0 + std::log(s.context_length / original) / std::log(original)))));
  }
  w.set(ak + "rope.freq_base", gguf_f32(static_cast<float>(s.rope_base)));
  w.set(ak + "attention.layer_norm_rms_epsilon", gguf_f32(static_cast<float>(s.rms_eps)));
  w.set(ak + "vocab_size", gguf_u32(static_cast<uint32_t>(s.vocab_size)));
  if (s.head_dim > 0) {
    w.set(ak + "attention.key_length", gguf_u32(static_cast<uint32_t>(head_dim)));
    w.set(ak + "attention.value_length", gguf_u32(static_cast<uint32_t>(head_dim)));
  }
  if (opt.arch == "granite") {  // the multipliers of Granite 3.x 2B
    w.set(ak + "embedding_scale", gguf_f32(12.0f));
    w.set(ak + "residual_scale", gguf_f32(0.22f));
    w.set(ak + "attention.scale", gguf_f32(0.015625f));
    w.set(ak + "logit_scale", gguf_f32(8.0f));
  }
  if (opt.arch == "qwen3moe" && opt.experts < 2) fail("make-model: qwen3moe needs --experts of at least 2");
  if (opt.experts < 0 || opt.experts_used < 0 || opt.experts_used > opt.experts || (opt.experts > 0 && opt.experts_used == 0))
    fail("make-model: {} experts with {} used per token is not a valid mixture of experts", opt.experts,
         opt.experts_used);
  if (opt.experts > 0) {
    w.set(ak + "expert_count", gguf_u32(static_cast<uint32_t>(opt.experts)));
    w.set(ak + "expert_used_count", gguf_u32(static_cast<uint32_t>(opt.experts_used)));
    if (opt.arch == "qwen3moe") w.set(ak + "expert_feed_forward_length", gguf_u32(static_cast<uint32_t>(s.ffn_dim)));
  }
  if (opt.sliding_window > 0) w.set(ak + "attention.sliding_window", gguf_u32(static_cast<uint32_t>(opt.sliding_window)));
  if (opt.swa_period > 0)
    w.set(ak + "attention.sliding_window_pattern", gguf_u32(static_cast<uint32_t>(opt.swa_period)));
  if (opt.attn_softcap > 0) w.set(ak + "attn_logit_softcapping", gguf_f32(static_cast<float>(opt.attn_softcap)));
  if (opt.final_softcap > 0) w.set(ak + "final_logit_softcapping", gguf_f32(static_cast<float>(opt.final_softcap)));
  if (opt.tokenizer_from.empty()) add_byte_level_vocab(w, s.vocab_size);
  if (!opt.chat_template.empty()) w.set("tokenizer.chat_template", gguf_string(opt.chat_template));

  const bool random_norms = opt.arch != "llama";
  uint64_t total_bytes = 0;
  int64_t parameters = 0;
  for (const auto& t : plan) {
    // Norms are 1-D like llama.cpp writes them.
    std::vector<int64_t> dims = {t.cols, t.rows};
    if (t.rows == 1) dims = {t.cols};
    if (t.experts > 0) dims = {t.cols, t.rows / t.experts, t.experts};
    total_bytes += w.add_tensor(t.name, dims, t.type);
    parameters += t.rows * t.cols;
  }

  const int threads = opt.threads > 0 ? opt.threads : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  ProgressBar bar("make-model " + s.name, static_cast<int64_t>(total_bytes >> 20),
                  opt.progress && total_bytes > (64u << 20));
  w.begin(path);
  constexpr size_t kChunkBytes = 16u << 20;
  std::vector<uint8_t> chunk;
  uint64_t done = 0;
  for (size_t ti = 0; ti < plan.size(); ++ti) {
    const TensorPlan& t = plan[ti];
    const size_t row_bytes = ggml_row_bytes(t.type, t.cols);
    const int64_t rows_per_chunk = std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / row_bytes));
    for (int64_t r0 = 0; r0 < t.rows; r0 += rows_per_chunk) {
      const int64_t r1 = std::min(t.rows, r0 + rows_per_chunk);
      chunk.resize(static_cast<size_t>(r1 - r0) * row_bytes);
      const int64_t n = r1 - r0;
      const int parts = static_cast<int>(std::min<int64_t>(threads, std::max<int64_t>(1, n / 16)));
      std::vector<std::thread> pool;
      for (int p = 1; p < parts; ++p) {
        int64_t a = r0 + n * p / parts, b = r0 + n * (p + 1) / parts;
        pool.emplace_back(fill_rows, std::cref(t), opt.seed, ti, random_norms, a, b, chunk.data() + (a - r0) * row_bytes);
      }
      fill_rows(t, opt.seed, ti, random_norms, r0, r0 + n / parts, chunk.data());
      for (auto& th : pool) th.join();
      w.write_data(chunk.data(), chunk.size());
      done += chunk.size();
      bar.update(static_cast<int64_t>(done >> 20), "MiB");
    }
  }
  w.finish();
  bar.finish();
  return RandomModelSummary{s, w.file_size(), parameters};
}

}  // namespace seer
