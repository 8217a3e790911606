#pragma once
// What `seer inspect` reports about a GGUF's tokenizer, read straight from its
// metadata (no tokenizer is built).
#include <cstdint>
#include <optional>
#include <string>

namespace seer {

class GgufFile;

struct TokenizerSummary {
  std::string model;          // tokenizer.ggml.model ("llama", "gpt2", ...); "" when absent
  std::string pre;            // tokenizer.ggml.pre; "" when absent
  int64_t vocab_size = 0;     // entries of tokenizer.ggml.tokens
  int64_t merges = 0;         // entries of tokenizer.ggml.merges (BPE)
  int64_t bos_id = -1, eos_id = -1, unk_id = -1, pad_id = -1;
  std::string bos_text, eos_text;          // the tokens' text when the ids are in range
  std::optional<bool> add_bos, add_eos;    // absent: the vocabulary type's default
  std::string chat_template_first_line;    // "" when there is no template
  int64_t chat_template_lines = 0;
};

// Throws seer::Error when a tokenizer key has the wrong type.
TokenizerSummary summarize_tokenizer(const GgufFile& f);

// "unset" ids (llama.cpp writes 0xFFFFFFFF for none) are reported as -1.
int64_t token_id_or_none(int64_t id);

}  // namespace seer
