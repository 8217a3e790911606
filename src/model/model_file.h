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
  WeightTensor ffn_norm;
  WeightTensor w_gate, w_up, w_down;
};

struct ModelWeights {
  WeightTensor token_embd;  // vocab x dim
  WeightTensor output_norm;
  WeightTensor output;  // vocab x dim; equals token_embd when tied
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
