#pragma once
// The tokenizer of llama.c checkpoints (tokenizer.bin): the Llama-2 SentencePiece
// vocabulary with spaces stored as ' ' and scores, encoded as llama2.c's run.c does
// (dummy " " prefix token, characters looked up whole else as <0xXX> byte tokens at
// id byte + 3, then repeated merging of the best-scoring adjacent pair).
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace seer {

class Llama2cTokenizer final : public Tokenizer {
 public:
  Llama2cTokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::string source);

  // parse_special is ignored: llama2.c has no special-token text.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special = false) const override;
  std::string token_bytes(int32_t id) const override;
  std::string token_text(int32_t id) const override;
  int32_t find_token(std::string_view text) const override;
  TokenType token_type(int32_t id) const override;
  int32_t vocab_size() const override { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const override { return bos_; }
  int32_t eos_id() const override { return eos_; }
  bool add_bos() const override { return bos_ >= 0; }
  bool add_space_prefix() const override { return true; }
  bool is_end_of_generation(int32_t id) const override { return id >= 0 && id == eos_; }
  std::vector<int32_t> end_of_generation_ids() const override;
  std::string type_name() const override { return "llama2.c tokenizer.bin (SentencePiece scores)"; }

 private:
  struct Symbol {
    int32_t id;
    int prev;
    int next;
    bool alive;
  };
  int byte_value(int32_t id) const;  // 0..255 for "<0xXX>" pieces, else -1
  // Merges symbols [begin, end) by best score and appends the result.
  void merge_range(std::vector<Symbol>& symbols, size_t begin, size_t end, std::vector<int32_t>& out) const;

  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::string source_;
  StringIndex index_;  // piece -> first id with it
  int32_t bos_ = -1, eos_ = -1;
  // No piece has a space after another character, so merges never cross the start of
  // a word and words can be merged one by one (true for the Llama-2 vocabulary).
  bool words_are_independent_ = false;
};

}  // namespace seer
