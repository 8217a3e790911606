#include "model/model_config.h"

#include <algorithm>
#include <array>
#include <climits>

#include "common/error.h"
#include "model/gguf_file.h"

namespace seer {
namespace {

constexpr std::array<std::string_view, 6> kLlamaBlockArchs = {"llama", "mistral", "qwen2", "smollm",
                                                               "granite", "internlm2"};

// Metadata integers are int64 in the file; a value beyond int range must be an error,
// not a silent wrap to some small positive number.
int to_int(const GgufFile& f, std::string_view key, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) fail("{}: metadata '{}' = {} is out of range", f.path(), key, v);
  return static_cast<int>(v);
}

}  // namespace

int64_t ModelConfig::parameter_count() const {
  int64_t q = int64_t{dim} * n_heads * head_dim;
  int64_t kv = 2 * int64_t{dim} * n_kv_heads * head_dim;
  int64_t o = int64_t{n_heads} * head_dim * dim;
  int64_t ffn = 3 * int64_t{dim} * ffn_dim;
  int64_t per_layer = q + kv + o + ffn + 2 * int64_t{dim};
  int64_t embed = int64_t{vocab_size} * dim * (tied_embeddings ? 1 : 2);
  return per_layer * n_layers + embed + dim;
}

void ModelConfig::validate(const std::string& source) const {
  auto positive = [&](const char* what, int64_t v) {
    if (v <= 0) fail("{}: {} must be positive, got {}", source, what, v);
  };
  positive("layer count", n_layers);
  positive("embedding size", dim);
  positive("head count", n_heads);
  positive("KV head count", n_kv_heads);
  positive("head dimension", head_dim);
  positive("FFN size", ffn_dim);
  positive("vocabulary size", vocab_size);
  positive("context length", context_length);
  if (n_heads % n_kv_heads != 0)
    fail("{}: head count {} is not a multiple of the KV head count {}", source, n_heads, n_kv_heads);
  if (head_dim % 2 != 0) fail("{}: head dimension {} must be even for RoPE", source, head_dim);
  if (n_layers > 1024 || dim > (1 << 16) || ffn_dim > (1 << 18) || vocab_size > (1 << 22) ||
      n_heads > 1024)
    fail("{}: hyper-parameters out of the supported range", source);
  if (rms_eps <= 0 || rms_eps > 1) fail("{}: RMSNorm epsilon {} out of range", source, rms_eps);
  if (rope_base <= 0) fail("{}: RoPE base {} must be positive", source, rope_base);
}

ModelConfig config_from_gguf(const GgufFile& f) {
  ModelConfig c;
  c.arch = f.get_string("general.architecture");
  if (std::find(kLlamaBlockArchs.begin(), kLlamaBlockArchs.end(), c.arch) == kLlamaBlockArchs.end())
    fail("{}: architecture '{}' is not supported (seer runs Llama-block models: llama, mistral, qwen2, smollm)",
         f.path(), c.arch);
  const std::string a = c.arch + ".";
  c.name = f.find_string("general.name").value_or("");
  auto get = [&](const std::string& key) { return to_int(f, key, f.get_int(key)); };
  auto get_or = [&](const std::string& key, int fallback) {
    auto v = f.find_int(key);
    return v ? to_int(f, key, *v) : fallback;
  };
  c.n_layers = get(a + "block_count");
  c.dim = get(a + "embedding_length");
  c.n_heads = get(a + "attention.head_count");
  c.n_kv_heads = get_or(a + "attention.head_count_kv", c.n_heads);
  c.ffn_dim = get(a + "feed_forward_length");
  c.context_length = get_or(a + "context_length", 2048);
  c.rope_base = f.find_float(a + "rope.freq_base").value_or(10000.0);
  c.rms_eps = f.find_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5);
  if (c.n_heads <= 0) fail("{}: metadata '{}attention.head_count' must be positive", f.path(), a);
  c.head_dim = get_or(a + "attention.key_length", c.dim / c.n_heads);
  if (auto t = f.find_string(a + "rope.scaling.type")) {
    c.rope_scaling.type = *t;
    c.rope_scaling.factor = f.find_float(a + "rope.scaling.factor").value_or(1.0);
    c.rope_scaling.original_context = f.find_int(a + "rope.scaling.original_context_length").value_or(0);
  }
  if (f.has("tokenizer.ggml.tokens"))
    c.vocab_size = to_int(f, "tokenizer.ggml.tokens", static_cast<int64_t>(f.get_array("tokenizer.ggml.tokens").size()));
  c.vocab_size = get_or(a + "vocab_size", c.vocab_size);
  if (const GgufTensorInfo* embd = f.find_tensor("token_embd.weight"); embd && embd->shape.size() == 2)
    c.vocab_size = to_int(f, "token_embd.weight rows", embd->shape[1]);
  // Token ids: llama.cpp writes 0xFFFFFFFF (u32) for "none"; anything else out of the
  // vocabulary is reported as none too, so it can never index past the vocabulary.
  auto token_id = [&](const char* key) -> int32_t {
    int64_t id = f.find_int(key).value_or(-1);
    return id >= 0 && id < c.vocab_size ? static_cast<int32_t>(id) : -1;
  };
  c.bos_id = token_id("tokenizer.ggml.bos_token_id");
  c.eos_id = token_id("tokenizer.ggml.eos_token_id");
  c.pad_id = token_id("tokenizer.ggml.padding_token_id");
  c.chat_template = f.find_string("tokenizer.chat_template").value_or("");
  c.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.rope_neox = c.arch == "qwen2";
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.validate(f.path());
  return c;
}

}  // namespace seer
