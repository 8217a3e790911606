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
};

// tiny, llama-125m, llama-1b, llama-2-7b, mistral-7b.
std::optional<ModelShape> named_model_shape(std::string_view name);
std::vector<std::string> model_shape_names();

struct RandomModelOptions {
  ModelShape shape;
  GgmlType type = GgmlType::F32;  // of the matrices; norms are always F32
  // Per-matrix types by tensor name (e.g. "output.weight" -> Q6_K), over `type`: the
  // mixes llama.cpp's _S/_M/_L recipes write.
  std::map<std::string, GgmlType> tensor_types;
  uint64_t seed = 0;
  // Copy tokenizer.* from this GGUF; the vocabulary size becomes its token count.
  std::string tokenizer_from;
  int threads = 0;  // 0: all hardware threads
  bool progress = true;
};

struct RandomModelSummary {
  ModelShape shape;  // as written (vocab size possibly from the copied tokenizer)
  uint64_t file_bytes = 0;
  int64_t parameters = 0;
};

// Writes the model to `path`. Throws seer::Error for an invalid shape (naming the
// field) or a type the shape's row lengths cannot use.
RandomModelSummary write_random_model(const std::string& path, const RandomModelOptions& opt);

// llama.cpp's general.file_type code for a model whose matrices have type `t`.
uint32_t llama_file_type(GgmlType t);

}  // namespace seer
