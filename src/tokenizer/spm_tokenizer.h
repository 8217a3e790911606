#pragma once
// SentencePiece-style tokenizer for GGUF vocabularies of type `llama`, as llama.cpp
// implements it: spaces become U+2581 (with a dummy prefix space at the start and
// after special tokens), UTF-8 characters are merged pairwise by the best token
// score, and characters no token covers fall back to <0xXX> byte tokens.
#include <array>
#include <memory>

#include "tokenizer/gguf_tokenizer.h"

namespace seer {

class SpmTokenizer final : public GgufTokenizer {
 public:
  explicit SpmTokenizer(Vocab vocab);

  std::string token_bytes(int32_t id) const override;
  std::string type_name() const override { return "llama (SentencePiece)"; }

 protected:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;

 private:
  void encode_chunk(std::string_view text, std::vector<int32_t>& out) const;

  std::array<int32_t, 256> byte_token_{};  // <0xXX>, else the one-byte token, else unk (-1: none)
  // True when U+2581 occurs in tokens only as a leading run, so merges never cross
  // the start of a word (true for Llama's vocabulary).
  bool words_are_independent_ = false;
};

std::unique_ptr<Tokenizer> spm_tokenizer_from_gguf(const GgufFile& f);

}  // namespace seer
