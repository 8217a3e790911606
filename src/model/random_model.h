#pragma once
// GGUF models with random weights for tests and benchmarks (`seer make-model`): Llama
// blocks of a named or custom shape, weights uniform in ±1/sqrt(fan_in) so activations
// stay in range, norms 1.0 (F32). Generation is deterministic for a seed whatever the
// thread count, multithreaded, and streamed to disk.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "model/ggml_types.h"

namespace seer {

struct ModelShape {
  std::string name;
  int n_layers = 0;
  int dim = 0;
  int n_heads = 0;
  int n_kv_heads = 0;
  int ffn_dim = 0;
  int vocab_size = 0;
  int context_length = 0;
  double rope_base = 10000.0;
  double rms_eps = 1e-5;
  int head_dim = 0;  // 0: dim / n_heads; else written as attention.key_length (qwen3)
};

// tiny, llama-125m, llama-1b, llama-2-7b, mistral-7b.
std::optional<ModelShape> named_model_shape(std::string_view name);
std::vector<std::string> model_shape_names();

// Architectures make-model writes (general.architecture), each with the tensor names
// and metadata keys llama.cpp reads for it.
std::vector<std::string> random_model_architectures();

struct RandomModelOptions {
  ModelShape shape;
  std::string arch = "llama";
  // No output.weight: the logits reuse token_embd (as small Qwen3 and Llama 3.2 do).
  bool tied_embeddings = false;
  // Llama 3.1-style RoPE frequency scaling (factor 8, low/high frequency factors 1
  // and 4, original context 8192) stored as rope_freqs.weight, as llama.cpp's
  // converter does.
  bool llama3_rope = false;
  // phi3 LongRoPE: rope_factors_long/short.weight (fixed made-up factors, long ones
  // in use: the original context is written as half the context) and
  // rope.scaling.attn_factor as Phi-3's converter computes it.
  bool longrope = false;
  int rope_dim = 0;  // rope.dimension_count (0: head_dim; partial rotary below it)
  // Mixture of experts (qwen3moe, or llama as Mixtral): expert_count experts of
  // shape.ffn_dim each, experts_used per token; the router stays F32.
  int experts = 0, experts_used = 0;
  // gemma2/gemma3 metadata (0: the key is not written, llama.cpp's default applies).
  int sliding_window = 0;
  int swa_period = 0;  // attention.sliding_window_pattern
  double attn_softcap = 0, final_softcap = 0;
  GgmlType type = GgmlType::F32;  // of the matrices; norms are always F32
  // Per-matrix types by tensor name (e.g. "output.weight" -> Q6_K), over `type`: the
  // mixes llama.cpp's _S/_M/_L recipes write.
  std::map<std::string, GgmlType> tensor_types;
  uint64_t seed = 0;
  // Copy tokenizer.* from this GGUF; the vocabulary size becomes its token count.
  std::string tokenizer_from;
  // tokenizer.chat_template (Jinja text), over a copied one; "": none written.
  std::string chat_template;
  int threads = 0;  // 0: all hardware threads
  bool progress = true;
};

struct RandomModelSummary {
  ModelShape shape;  // as written (vocab size possibly from the copied tokenizer)
  uint64_t file_bytes = 0;
  int64_t parameters = 0;
};

// Writes the model to `path`. Norm weights are 1.0 for "llama" (the files seer always
// wrote) and uniform in [0.75, 1.25) for the other architectures, so that a norm
// applied to the wrong place changes the logits. Throws seer::Error for an invalid shape (naming the
// field) or a type the shape's row lengths cannot use.
RandomModelSummary write_random_model(const std::string& path, const RandomModelOptions& opt);

// The Llama 3.1 RoPE frequency divisors for head_dim and base (what llama.cpp's
// converter stores in rope_freqs.weight).
std::vector<float> llama3_rope_divisors(int head_dim, double base, double factor = 8.0,
                                        double low_freq_factor = 1.0, double high_freq_factor = 4.0,
                                        double original_context = 8192.0);

// llama.cpp's general.file_type code for a model whose matrices have type `t`.
uint32_t llama_file_type(GgmlType t);

}  // namespace seer
