#pragma once
// A model's hyper-parameters and weights, loaded from a GGUF file (mmap, no copy)
// or a llama2.c checkpoint (f32). The tokenizer is loaded separately
// (tokenizer/tokenizer.h) because llama2.c keeps it in its own file.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "model/ggml_types.h"
#include "model/model_config.h"

namespace seer {

class GgufFile;
class MappedFile;

// A weight matrix of `rows` x `cols` stored row-major (GGML shape {cols, rows}); a
// vector has rows == 1.
struct WeightTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  int64_t rows = 0;
  int64_t cols = 0;
  const void* data = nullptr;
  size_t bytes = 0;
  bool present() const { return data != nullptr; }
};

struct LayerWeights {
  WeightTensor attn_norm;
  WeightTensor wq, wk, wv, wo;
  WeightTensor bq, bk, bv;  // optional (qwen2)
  WeightTensor q_norm, k_norm;  // per-head RMSNorm weights (qwen3), head_dim each
  WeightTensor ffn_norm;
  WeightTensor w_gate, w_up, w_down;
  WeightTensor attn_post_norm, ffn_post_norm;  // gemma: norms of each branch's output
  // Mixture of experts (instead of w_gate/w_up/w_down): the router (n_experts x dim)
  // and the experts' matrices stacked, expert e owning rows [e*r, (e+1)*r) of each
  // (r = ffn_dim for gate/up, dim for down); expert_rows() views one.
  WeightTensor router;
  WeightTensor gate_exps, up_exps, down_exps;
};

// Rows [first, first + count) of a matrix as a matrix of its own (no copy).
WeightTensor row_slice(const WeightTensor& t, int64_t first, int64_t count);
// Expert e's matrix of a stacked expert tensor with n_experts experts.
inline WeightTensor expert_rows(const WeightTensor& stacked, int n_experts, int e) {
  const int64_t r = stacked.rows / n_experts;
  return row_slice(stacked, e * r, r);
}

struct ModelWeights {
  WeightTensor token_embd;  // vocab x dim
  WeightTensor output_norm;
  WeightTensor output;  // vocab x dim; equals token_embd when tied
  WeightTensor rope_freqs;  // optional (Llama 3.x): head_dim/2 RoPE frequency divisors
  std::vector<LayerWeights> layers;
  size_t total_bytes() const;
};

class ModelFile {
 public:
  // Detects the format from the magic bytes: GGUF, else llama2.c checkpoint.
  static std::unique_ptr<ModelFile> open(const std::string& path);
  ~ModelFile();

  const std::string& path() const { return path_; }
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }
  // The GGUF container when the model came from one (tokenizer and inspect use it).
  const GgufFile* gguf() const { return gguf_.get(); }

 private:
  ModelFile() = default;
  friend std::unique_ptr<ModelFile> open_gguf_model(const std::string& path);
  friend std::unique_ptr<ModelFile> open_llama2c_model(const std::string& path);

  std::string path_;
  ModelConfig config_;
  ModelWeights weights_;
  std::unique_ptr<GgufFile> gguf_;
  std::unique_ptr<MappedFile> mapping_;  // llama2.c weights point into it
};

// Format-specific loaders (model_file.cc dispatches to these).
std::unique_ptr<ModelFile> open_gguf_model(const std::string& path);
std::unique_ptr<ModelFile> open_llama2c_model(const std::string& path);

}  // namespace seer
