#pragma once
// Hyper-parameters of a Llama-family model, read from GGUF metadata or a llama2.c
// header.
#include <cstdint>
#include <string>

namespace seer {

class GgufFile;

struct RopeScaling {
  std::string type = "none";  // none | linear | yarn | llama3
  double factor = 1.0;
  int64_t original_context = 0;
};

struct ModelConfig {
  std::string arch = "llama";  // llama, mistral, qwen2, smollm, ...
  std::string name;
  int n_layers = 0;
  int dim = 0;         // embedding size
  int n_heads = 0;
  int n_kv_heads = 0;  // < n_heads: grouped-query attention
  int head_dim = 0;
  int ffn_dim = 0;
  int vocab_size = 0;
  int context_length = 0;
  double rope_base = 10000.0;
  RopeScaling rope_scaling;
  double rms_eps = 1e-5;
  bool qkv_bias = false;       // qwen2
  // RoPE rotates (x[i], x[i + head_dim/2]) pairs ("neox", qwen2) instead of
  // adjacent (x[2i], x[2i+1]) pairs (llama; GGUF converters permute Q/K for it).
  bool rope_neox = false;
  bool tied_embeddings = false;  // output projection reuses token_embd
  int32_t bos_id = -1, eos_id = -1, pad_id = -1;
  std::string chat_template;

  // Weight parameters (for the cost model and inspect).
  int64_t parameter_count() const;
  // Throws seer::Error naming `source` if the values are inconsistent.
  void validate(const std::string& source) const;
};

// Reads the config of a Llama-block architecture. Throws seer::Error naming the
// architecture for anything else.
ModelConfig config_from_gguf(const GgufFile& f);

}  // namespace seer
