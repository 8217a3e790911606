#pragma once
// llama2.c checkpoints (karpathy/llama2.c, the legacy "version 0" export that run.c
// reads): a header of 7 int32 (dim, hidden_dim, n_layers, n_heads, n_kv_heads,
// vocab_size, seq_len; a negative vocab_size means the classifier is not shared with
// the token embedding) followed by f32 weights. The loader itself is
// open_llama2c_model (model_file.h); this header exposes the layout for tests and
// `seer inspect`.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace seer {

struct Llama2cHeader {
  int32_t dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, vocab_size = 0, seq_len = 0;
};
constexpr size_t kLlama2cHeaderBytes = 7 * sizeof(int32_t);

// One weight matrix (rows x cols, row-major f32) at a byte offset in the file. Names
// follow GGUF ("blk.3.attn_q.weight") so both formats print alike.
struct Llama2cTensor {
  std::string name;
  int64_t rows = 0, cols = 0;
  size_t offset = 0;
  size_t bytes() const { return static_cast<size_t>(rows * cols) * sizeof(float); }
};

struct Llama2cLayout {
  Llama2cHeader header;
  ModelConfig config;
  bool shared_classifier = true;
  std::vector<Llama2cTensor> tensors;  // in file order, freq_cis tables excluded
  size_t file_size = 0;                // the exact size the header implies
};

// Reads and validates the header in data[0..size) and computes where every tensor
// lies; the file size must match exactly. Throws seer::Error naming `name`, the field
// and what was expected. Never reads past `size`.
Llama2cLayout llama2c_layout(const uint8_t* data, size_t size, const std::string& name);

// The header of a llama2.c checkpoint with this config (for tests and tools that write
// such files); the caller appends the f32 weights in llama2.c order.
std::vector<uint8_t> llama2c_header_bytes(const Llama2cHeader& h);

// A summary of a llama2.c tokenizer.bin (int32 max_token_length, then per token: f32
// score, int32 length, bytes), bounds-checked. Used by `seer inspect --tokenizer`.
struct Llama2cTokenizerSummary {
  int32_t vocab_size = 0;
  int32_t max_token_length = 0;
  std::vector<std::string> first_tokens;  // up to 8, for display
};
Llama2cTokenizerSummary summarize_llama2c_tokenizer(const std::string& path, int32_t vocab_size);

}  // namespace seer
