#include "model/model_config.h"

#include <algorithm>
#include <array>
#include <climits>
#include <cmath>

#include "common/error.h"
#include "model/gguf_file.h"

namespace seer {
namespace {


// Metadata integers are int64 in the file; a value beyond int range must be an error,
// not a silent wrap to some small positive number.
int to_int(const GgufFile& f, std::string_view key, int64_t v) {
  if (v < INT32_MIN || v > INT32_MAX) fail("{}: metadata '{}' = {} is out of range", f.path(), key, v);
  return static_cast<int>(v);
}

// Gemma 2/3 as llama.cpp reads them: gemma2 always soft-caps attention (default cap
// from the metadata) and alternates local/global layers (window 4096 unless the
// metadata says otherwise); gemma3 has local layers only when sliding_window is set,
// five local to one global by default. The query scale is 1/sqrt(head_dim), except
// for the 27B models (by their layer count, as llama.cpp decides) which use
// 1/sqrt(dim / heads).
void read_gemma_config(const GgufFile& f, ModelConfig& c) {
  const std::string a = c.arch + ".";
  const bool gemma2 = c.arch == "gemma2";
  c.rope_neox = true;
  c.embed_scale = std::sqrt(static_cast<float>(c.dim));
  c.gelu_ffn = true;
  c.post_norms = true;
  c.qk_norm = !gemma2;
  c.final_softcap = f.find_float(a + "final_logit_softcapping").value_or(gemma2 ? 30.0 : 0.0);
  if (gemma2) c.attn_softcap = f.find_float(a + "attn_logit_softcapping").value_or(50.0);
  const auto window = f.find_int(a + "attention.sliding_window");
  c.sliding_window = static_cast<int>(window.value_or(gemma2 ? 4096 : 0));
  if (c.sliding_window > 0) {
    c.swa_period = static_cast<int>(f.find_int(a + "attention.sliding_window_pattern").value_or(gemma2 ? 2 : 6));
    c.rope_base_local = f.find_float(a + "rope.freq_base_swa").value_or(gemma2 ? c.rope_base : 10000.0);
  }
  const bool is_27b = (gemma2 && c.n_layers == 46) || (!gemma2 && c.n_layers == 62);
  c.attn_scale = 1.0 / std::sqrt(is_27b ? static_cast<double>(c.dim) / c.n_heads : static_cast<double>(c.head_dim));
}

}  // namespace

const std::vector<std::string>& supported_architectures() {
  static const std::vector<std::string> archs = {"llama", "mistral", "qwen2", "qwen3", "smollm", "granite",
                                                 "internlm2", "gemma2", "gemma3", "phi3", "qwen3moe"};
  return archs;
}

int64_t ModelConfig::parameter_count() const {
  int64_t q = int64_t{dim} * n_heads * head_dim;
  int64_t kv = 2 * int64_t{dim} * n_kv_heads * head_dim;
  int64_t o = int64_t{n_heads} * head_dim * dim;
  int64_t ffn = 3 * int64_t{dim} * ffn_dim * std::max(1, n_experts) + int64_t{dim} * n_experts;
  int64_t per_layer = q + kv + o + ffn + (post_norms ? 4 : 2) * int64_t{dim} + (qk_norm ? 2 * int64_t{head_dim} : 0);
  int64_t embed = int64_t{vocab_size} * dim * (tied_embeddings ? 1 : 2);
  return per_layer * n_layers + embed + dim;
}

bool ModelConfig::has_global_layer() const {
  for (int l = 0; l < n_layers; ++l)
    if (!layer_is_local(l)) return true;
  return false;
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
  if (n_experts < 0 || n_experts > 1024 || n_experts_used < 0 || n_experts_used > n_experts ||
      (n_experts > 0 && n_experts_used == 0))
    fail("{}: {} experts with {} used per token is not a valid mixture of experts", source, n_experts,
         n_experts_used);
  if (rope_dim < 0 || rope_dim > head_dim || rope_dim % 2 != 0)
    fail("{}: RoPE dimension {} must be even and at most the head dimension {}", source, rope_dim, head_dim);
  if (!(rope_attn_factor > 0)) fail("{}: RoPE attention factor {} must be positive", source, rope_attn_factor);
  if (rope_base_local < 0) fail("{}: local RoPE base {} must be positive", source, rope_base_local);
  if (sliding_window < 0 || swa_period < 0)
    fail("{}: sliding window {} and period {} must not be negative", source, sliding_window, swa_period);
  if (!(residual_scale > 0) || !(logit_scale > 0)) fail("{}: residual and logit scales must be positive", source);
  if (!(attn_softcap >= 0) || !(final_softcap >= 0) || !(attn_scale >= 0) || !(embed_scale > 0))
    fail("{}: soft-capping values and scales must be positive", source);
}

ModelConfig config_from_gguf(const GgufFile& f) {
  ModelConfig c;
  c.arch = f.get_string("general.architecture");
  const auto& archs = supported_architectures();
  if (std::find(archs.begin(), archs.end(), c.arch) == archs.end()) {
    std::string names;
    for (const auto& a : archs) names += (names.empty() ? "" : ", ") + a;
    fail("{}: architecture '{}' is not supported (seer runs: {}; docs/models.md lists what is checked)", f.path(),
         c.arch, names);
  }
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
  }
  c.rope_scaling.original_context = f.find_int(a + "rope.scaling.original_context_length").value_or(0);
  c.rope_attn_factor = f.find_float(a + "rope.scaling.attn_factor").value_or(1.0);
  c.rope_dim = get_or(a + "rope.dimension_count", c.head_dim);
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
  c.rope_neox = c.arch == "qwen2" || c.arch == "qwen3" || c.arch == "qwen3moe";
  c.qk_norm = c.arch == "qwen3" || c.arch == "qwen3moe";
  c.n_experts = get_or(a + "expert_count", 0);
  c.n_experts_used = get_or(a + "expert_used_count", 0);
  if (c.n_experts <= 1) c.n_experts = c.n_experts_used = 0;  // as llama.cpp: one expert is a dense FFN
  if (c.arch == "qwen3moe") {
    if (c.n_experts == 0) fail("{}: a qwen3moe model needs {}expert_count > 1", f.path(), a);
    if (c.n_experts_used > 0)  // qwen3moe's expert FFN size (else feed_forward_length / used, as llama.cpp)
      c.ffn_dim = get_or(a + "expert_feed_forward_length", c.ffn_dim / c.n_experts_used);
  }
  if (f.find_tensor("rope_freqs.weight")) {
    c.rope_freqs_tensor = "rope_freqs.weight";
  } else if (f.find_tensor("rope_factors_long.weight") || f.find_tensor("rope_factors_short.weight")) {
    const int64_t original = c.rope_scaling.original_context > 0 ? c.rope_scaling.original_context : c.context_length;
    c.rope_freqs_tensor = c.context_length > original ? "rope_factors_long.weight" : "rope_factors_short.weight";
  }
  c.rope_freqs = !c.rope_freqs_tensor.empty();
  if (c.arch == "phi3") c.rope_neox = true;
  if (c.arch == "gemma2" || c.arch == "gemma3") read_gemma_config(f, c);
  if (c.arch == "granite") {  // as llama.cpp: logit_scale required, the others optional
    c.logit_scale = f.get_float(a + "logit_scale");
    c.residual_scale = f.find_float(a + "residual_scale").value_or(1.0);
    c.embed_scale = static_cast<float>(f.find_float(a + "embedding_scale").value_or(1.0));
    c.attn_scale = f.find_float(a + "attention.scale").value_or(0.0);
  }
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.validate(f.path());
  return c;
}

}  // namespace seer
