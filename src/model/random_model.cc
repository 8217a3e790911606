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
  std::string name;
  int64_t rows, cols;
  GgmlType type;
  bool is_norm;
};

std::vector<TensorPlan> plan_tensors(const ModelShape& s, GgmlType type,
                                     const std::map<std::string, GgmlType>& overrides) {
  const int64_t head_dim = s.dim / s.n_heads;
  const int64_t q_dim = head_dim * s.n_heads, kv_dim = head_dim * s.n_kv_heads;
  std::vector<TensorPlan> t;
  auto matrix = [&](std::string name, int64_t rows, int64_t cols) {
    auto it = overrides.find(name);
    t.push_back({std::move(name), rows, cols, it == overrides.end() ? type : it->second, false});
  };
  auto norm = [&](std::string name) { t.push_back({std::move(name), 1, s.dim, GgmlType::F32, true}); };
  matrix("token_embd.weight", s.vocab_size, s.dim);
  for (int l = 0; l < s.n_layers; ++l) {
    const std::string p = "blk." + std::to_string(l) + ".";
    norm(p + "attn_norm.weight");
    matrix(p + "attn_q.weight", q_dim, s.dim);
    matrix(p + "attn_k.weight", kv_dim, s.dim);
    matrix(p + "attn_v.weight", kv_dim, s.dim);
    matrix(p + "attn_output.weight", s.dim, q_dim);
    norm(p + "ffn_norm.weight");
    matrix(p + "ffn_gate.weight", s.ffn_dim, s.dim);
    matrix(p + "ffn_up.weight", s.ffn_dim, s.dim);
    matrix(p + "ffn_down.weight", s.dim, s.ffn_dim);
  }
  norm("output_norm.weight");
  matrix("output.weight", s.vocab_size, s.dim);
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
  if (s.n_heads <= 0 || s.dim % s.n_heads != 0)
    fail("make-model: embedding size {} is not a multiple of the head count {}", s.dim, s.n_heads);
  ModelConfig c;
  c.n_layers = s.n_layers;
  c.dim = s.dim;
  c.n_heads = s.n_heads;
  c.n_kv_heads = s.n_kv_heads;
  c.head_dim = s.dim / s.n_heads;
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
void fill_rows(const TensorPlan& t, uint64_t seed, size_t tensor_index, int64_t r0, int64_t r1, uint8_t* out) {
  std::vector<float> row(static_cast<size_t>(t.cols));
  const size_t row_bytes = ggml_row_bytes(t.type, t.cols);
  const float scale = 1.0f / std::sqrt(static_cast<float>(t.cols));
  for (int64_t r = r0; r < r1; ++r) {
    if (t.is_norm) {
      std::fill(row.begin(), row.end(), 1.0f);
    } else {
      uint64_t mix = seed ^ (uint64_t{tensor_index} << 40) ^ static_cast<uint64_t>(r);
      Rng rng(splitmix64(mix));
      for (auto& x : row) {
        // 24 high bits -> uniform in [-scale, scale).
        float u = static_cast<float>(rng.next() >> 40) * (1.0f / 16777216.0f);
        x = (2.0f * u - 1.0f) * scale;
      }
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
  const std::vector<TensorPlan> plan = plan_tensors(s, opt.type, opt.tensor_types);
  for (const auto& [name, type] : opt.tensor_types)
    if (std::none_of(plan.begin(), plan.end(), [&](const TensorPlan& t) { return t.name == name; }))
      fail("make-model: no tensor '{}' to give type {}", name, ggml_type_name(type));
  for (const auto& t : plan)
    if (!t.is_norm) validate_type(t.type, t.cols, t.name);
  const int head_dim = s.dim / s.n_heads;

  w.set("general.architecture", gguf_string("llama"));
  w.set("general.name", gguf_string("random " + s.name + " (random weights)"));
  w.set("general.description",
        gguf_string(fmt::format("random weights written by seer make-model (seed {}); not a trained model",
                                opt.seed)));
  w.set("general.file_type", gguf_u32(llama_file_type(opt.type)));
  w.set("llama.context_length", gguf_u32(static_cast<uint32_t>(s.context_length)));
  w.set("llama.embedding_length", gguf_u32(static_cast<uint32_t>(s.dim)));
  w.set("llama.block_count", gguf_u32(static_cast<uint32_t>(s.n_layers)));
  w.set("llama.feed_forward_length", gguf_u32(static_cast<uint32_t>(s.ffn_dim)));
  w.set("llama.attention.head_count", gguf_u32(static_cast<uint32_t>(s.n_heads)));
  w.set("llama.attention.head_count_kv", gguf_u32(static_cast<uint32_t>(s.n_kv_heads)));
  w.set("llama.rope.dimension_count", gguf_u32(static_cast<uint32_t>(head_dim)));
  w.set("llama.rope.freq_base", gguf_f32(static_cast<float>(s.rope_base)));
  w.set("llama.attention.layer_norm_rms_epsilon", gguf_f32(static_cast<float>(s.rms_eps)));
  w.set("llama.vocab_size", gguf_u32(static_cast<uint32_t>(s.vocab_size)));
  if (opt.tokenizer_from.empty()) add_byte_level_vocab(w, s.vocab_size);

  uint64_t total_bytes = 0;
  int64_t parameters = 0;
  for (const auto& t : plan) {
    // Norms are 1-D like llama.cpp writes them.
    total_bytes += w.add_tensor(t.name, t.is_norm ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.cols, t.rows},
                                t.type);
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
        pool.emplace_back(fill_rows, std::cref(t), opt.seed, ti, a, b, chunk.data() + (a - r0) * row_bytes);
      }
      fill_rows(t, opt.seed, ti, r0, r0 + n / parts, chunk.data());
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
