#pragma once
// Random Llama-block models held in memory for backend tests, and a plain
// contiguous single-sequence reference forward pass (straightforward loops over f32
// copies of the weights, double accumulators) to compare the paged batched backend
// against.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/ggml_types.h"
#include "model/model_config.h"
#include "model/model_file.h"

namespace seer::testing {

struct TestModelSpec {
  int n_layers = 2;
  int dim = 64;
  int n_heads = 4;
  int n_kv_heads = 2;
  int ffn_dim = 96;
  int vocab = 67;
  GgmlType type = GgmlType::F32;  // of the matrices
  bool qkv_bias = false;
  bool rope_neox = false;
  double rope_factor = 1.0;  // linear RoPE scaling when != 1
  bool tied_embeddings = false;
  uint32_t seed = 1;
};

class TestModel {
 public:
  explicit TestModel(const TestModelSpec& spec);
  const ModelConfig& config() const { return config_; }
  const ModelWeights& weights() const { return weights_; }

  // Logits (tokens.size() x vocab) of every position of one sequence.
  std::vector<float> reference_logits(const std::vector<int32_t>& tokens) const;

 private:
  struct Matrix {
    std::vector<uint8_t> bytes;  // in the model's type
    std::vector<float> f32;      // the values those bytes hold
  };
  WeightTensor add(const std::string& name, int64_t rows, int64_t cols, GgmlType type, float scale, float offset = 0);
  const std::vector<float>& f32(const WeightTensor& t) const;

  ModelConfig config_;
  ModelWeights weights_;
  std::vector<std::unique_ptr<Matrix>> storage_;
  uint32_t rng_state_;
};

}  // namespace seer::testing
