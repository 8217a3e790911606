#pragma once
// Byte-level BPE for GGUF vocabularies of type `gpt2`: the text is cut into words by
// the pre-tokenizer regexes, each word's bytes are written with GPT-2's byte-to-
// unicode mapping, and its characters are merged pairwise by merge rank (lowest
// first), as llama.cpp does.
#include <memory>
#include <unordered_map>
#include <string>
#include <vector>

#include "tokenizer/bpe_pretokenizer.h"
#include "tokenizer/gguf_tokenizer.h"

namespace seer {

class BpeTokenizer final : public GgufTokenizer {
 public:
  // merges: "left right" strings in rank order (tokenizer.ggml.merges).
  BpeTokenizer(Vocab vocab, const std::vector<std::string>& merges, PreTokenizerSpec spec);

  std::string token_bytes(int32_t id) const override;
  std::string type_name() const override;

  // The rank of merging `left` and `right`, or -1.
  int32_t merge_rank(std::string_view left, std::string_view right) const;

 protected:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;

 private:
  void encode_word(const std::string& word, std::vector<int32_t>& out) const;

  struct Merge {
    int32_t rank;
    int32_t result;  // id of the merged text, -1 when it is not a token
  };
  // The merge of two symbols; rank -1 when there is none.
  Merge find_merge(int32_t left_id, std::string_view left, int32_t right_id, std::string_view right) const;

  PreTokenizerSpec spec_;
  BpePreTokenizer pre_;
  // Merges of two tokens, keyed by (left id << 32 | right id): the common case, and
  // cheaper than hashing strings. Merges naming a string that is no token (which
  // consistent vocabularies do not have) are kept by text in the second map.
  std::unordered_map<uint64_t, Merge> token_merges_;
  StringIndex text_merges_;  // "left right" -> rank
};

std::unique_ptr<Tokenizer> bpe_tokenizer_from_gguf(const GgufFile& f);

}  // namespace seer
