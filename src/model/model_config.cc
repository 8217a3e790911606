#include "model/model_config.h"

#include <algorithm>
#include <array>

#include "common/error.h"
#include "model/gguf_file.h"

namespace seer {
namespace {

constexpr std::array<std::string_view, 6> kLlamaBlockArchs = {"llama", "mistral", "qwen2", "smollm",
                                                               "granite", "internlm2"};

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
  c.n_layers = static_cast<int>(f.get_int(a + "block_count"));
  c.dim = static_cast<int>(f.get_int(a + "embedding_length"));
  c.n_heads = static_cast<int>(f.get_int(a + "attention.head_count"));
  c.n_kv_heads = static_cast<int>(f.find_int(a + "attention.head_count_kv").value_or(c.n_heads));
  c.ffn_dim = static_cast<int>(f.get_int(a + "feed_forward_length"));
  c.context_length = static_cast<int>(f.find_int(a + "context_length").value_or(2048));
  c.rope_base = f.find_float(a + "rope.freq_base").value_or(10000.0);
  c.rms_eps = f.find_float(a + "attention.layer_norm_rms_epsilon").value_or(1e-5);
  if (c.n_heads <= 0) fail("{}: metadata '{}attention.head_count' must be positive", f.path(), a);
  int64_t head_dim = f.find_int(a + "attention.key_length").value_or(c.dim / c.n_heads);
  c.head_dim = static_cast<int>(head_dim);
  if (auto t = f.find_string(a + "rope.scaling.type")) {
    c.rope_scaling.type = *t;
    c.rope_scaling.factor = f.find_float(a + "rope.scaling.factor").value_or(1.0);
    c.rope_scaling.original_context = f.find_int(a + "rope.scaling.original_context_length").value_or(0);
  }
  if (const GgufValue* tokens = f.find("tokenizer.ggml.tokens"))
    c.vocab_size = static_cast<int>(tokens->as_array("tokenizer.ggml.tokens").size());
  if (auto v = f.find_int(a + "vocab_size")) c.vocab_size = static_cast<int>(*v);
  if (const GgufTensorInfo* embd = f.find_tensor("token_embd.weight"); embd && embd->shape.size() == 2)
    c.vocab_size = static_cast<int>(embd->shape[1]);
  c.bos_id = static_cast<int32_t>(f.find_int("tokenizer.ggml.bos_token_id").value_or(-1));
  c.eos_id = static_cast<int32_t>(f.find_int("tokenizer.ggml.eos_token_id").value_or(-1));
  c.pad_id = static_cast<int32_t>(f.find_int("tokenizer.ggml.padding_token_id").value_or(-1));
  c.chat_template = f.find_string("tokenizer.chat_template").value_or("");
  c.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  c.rope_neox = c.arch == "qwen2";
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.validate(f.path());
  return c;
}

}  // namespace seer
