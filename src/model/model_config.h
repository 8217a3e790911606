#pragma once
// Hyper-parameters of a Llama-family model, read from GGUF metadata or a llama2.c
// header.
#include <cstdint>
#include <string>
#include <vector>

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
  // qwen3: Q and K are RMS-normalised per head (attn_q_norm / attn_k_norm, head_dim
  // weights) before RoPE.
  bool qk_norm = false;
  // RoPE frequency divisors from a tensor (rope_dim/2 values): Llama 3.x stores them
  // as rope_freqs.weight (the metadata need not say so); Phi-3 LongRoPE as
  // rope_factors_long/short.weight, the long ones used when the context is longer
  // than rope_scaling.original_context (as llama.cpp does at its default context).
  bool rope_freqs = false;
  std::string rope_freqs_tensor;  // which tensor holds them
  int rope_dim = 0;               // rotated values per head (0: head_dim; Phi-4-mini rotates 3/4)
  double rope_attn_factor = 1.0;  // cos/sin multiplied by it (rope.scaling.attn_factor)
  // Gemma 2/3. The GGUF converter already stores Gemma's RMSNorm weights as (1 + w),
  // so every norm here is a plain RMSNorm.
  float embed_scale = 1.0f;    // token embeddings are multiplied by it (gemma: sqrt(dim))
  bool gelu_ffn = false;       // GELU (tanh approximation) gate instead of SiLU
  bool post_norms = false;     // post_attention_norm and post_ffw_norm on each branch output
  double attn_scale = 0.0;     // query scale; 0: 1/sqrt(head_dim)
  double attn_softcap = 0.0;   // scores -> c * tanh(scores / c) when > 0 (gemma2)
  double final_softcap = 0.0;  // the same on the logits
  // Sliding-window attention: a local layer's token at position p sees positions
  // p - sliding_window + 1 .. p. Layer l is local when swa_period == 0 or
  // l % swa_period < swa_period - 1 (every swa_period-th layer is global).
  int sliding_window = 0;  // 0: every layer is global
  int swa_period = 0;
  double rope_base_local = 0.0;  // RoPE base of local layers (0: rope_base)
  bool layer_is_local(int layer) const {
    return sliding_window > 0 && (swa_period == 0 || layer % swa_period < swa_period - 1);
  }
  bool has_global_layer() const;
  // granite: each branch output is multiplied by residual_scale before its residual
  // add, and the logits are divided by logit_scale (embedding_scale and
  // attention.scale set embed_scale and attn_scale).
  double residual_scale = 1.0;
  double logit_scale = 1.0;
  // Mixture-of-experts FFN (qwen3moe; llama with experts, as Mixtral): a router
  // (ffn_gate_inp) picks the n_experts_used experts of highest softmax probability,
  // their weights renormalised to sum to 1 (llama.cpp does so for both); each
  // expert is a SwiGLU FFN of ffn_dim. 0: a dense FFN.
  int n_experts = 0;
  int n_experts_used = 0;
  int32_t bos_id = -1, eos_id = -1, pad_id = -1;
  std::string chat_template;

  // Weight parameters (for the cost model and inspect).
  int64_t parameter_count() const;
  // Throws seer::Error naming `source` if the values are inconsistent.
  void validate(const std::string& source) const;
};

// Architectures config_from_gguf accepts (general.architecture values).
const std::vector<std::string>& supported_architectures();

// Reads the config of a Llama-block architecture. Throws seer::Error naming the
// architecture for anything else.
ModelConfig config_from_gguf(const GgufFile& f);

}  // namespace seer
