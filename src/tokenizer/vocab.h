#pragma once
// The vocabulary shared by the GGUF tokenizers: token strings, scores and types,
// special ids, the add-BOS/EOS and dummy-prefix flags, end-of-generation ids and the
// tokens matched ahead of the main algorithm. Read from tokenizer.ggml.* metadata
// with llama.cpp's defaults and per-model fixes, so that encoding matches it.
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace seer {

class GgufFile;

// Hash that lets unordered_map<std::string, ...> be searched with a string_view.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using StringIndex = std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>>;

// Defaults that depend on the tokenizer model / pre-tokenizer; metadata overrides them.
struct VocabDefaults {
  int32_t bos = -1, eos = -1, unk = -1;
  bool add_bos = false;
  bool add_eos = false;
  bool add_space_prefix = false;
};

struct Vocab {
  enum Strip : uint8_t { kStripNone = 0, kStripLeft = 1, kStripRight = 2 };

  std::string model;  // tokenizer.ggml.model
  std::string pre;    // tokenizer.ggml.pre ("" when absent)
  std::string source; // file name, for messages

  std::vector<std::string> text;
  std::vector<float> score;
  std::vector<TokenType> type;
  std::vector<uint8_t> strip;  // Strip bits: whitespace eaten next to the token when matched in text
  StringIndex index;            // text -> id (the last id when a string repeats, as llama.cpp)

  int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1, eom = -1;
  bool add_bos = false, add_eos = false, add_space_prefix = false;

  std::vector<int32_t> eog;                // sorted end-of-generation ids
  std::vector<int32_t> special_by_length;  // Control/UserDefined/Unknown ids, longest text first

  int32_t size() const { return static_cast<int32_t>(text.size()); }
  bool valid(int32_t id) const { return id >= 0 && id < size(); }
  int32_t find(std::string_view s) const {
    auto it = index.find(s);
    return it == index.end() ? -1 : it->second;
  }
  bool is_eog(int32_t id) const;
  TokenType type_of(int32_t id) const { return valid(id) ? type[static_cast<size_t>(id)] : TokenType::Undefined; }
};

// Reads the vocabulary of `f`. Throws seer::Error naming the file and key when the
// token arrays are missing, mistyped or of different lengths.
Vocab load_vocab(const GgufFile& f, const VocabDefaults& defaults);

}  // namespace seer
