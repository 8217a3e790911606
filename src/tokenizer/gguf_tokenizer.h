#pragma once
// What the GGUF tokenizers (SentencePiece-style and byte-level BPE) share: the
// vocabulary, the special-token partition, the add-BOS/EOS rules and the id queries.
// Subclasses encode one plain-text fragment and map a token to its bytes.
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace seer {

class GgufTokenizer : public Tokenizer {
 public:
  explicit GgufTokenizer(Vocab vocab) : vocab_(std::move(vocab)) {}

  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = false) const override;
  std::string token_text(int32_t id) const override;
  int32_t find_token(std::string_view text) const override { return vocab_.find(text); }
  TokenType token_type(int32_t id) const override { return vocab_.type_of(id); }
  int32_t vocab_size() const override { return vocab_.size(); }
  int32_t bos_id() const override { return vocab_.bos; }
  int32_t eos_id() const override { return vocab_.eos; }
  bool add_bos() const override { return vocab_.add_bos; }
  bool add_eos() const override { return vocab_.add_eos; }
  bool add_space_prefix() const override { return vocab_.add_space_prefix; }
  bool is_end_of_generation(int32_t id) const override { return vocab_.is_eog(id); }
  std::vector<int32_t> end_of_generation_ids() const override { return vocab_.eog; }

  const Vocab& vocab() const { return vocab_; }

 protected:
  // Encodes one fragment of plain text (never empty); `after_special` is true at the
  // start of the text and right after a special token.
  virtual void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const = 0;

  Vocab vocab_;
};

}  // namespace seer
