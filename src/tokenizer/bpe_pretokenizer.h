#pragma once
// Pre-tokenization for byte-level BPE: the text is cut into words by the regexes of
// the vocabulary's `tokenizer.ggml.pre` type (llama.cpp's lists). Several regexes are
// applied one after another, each splitting every piece the previous ones produced;
// the text between matches stays as pieces of its own.
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/pcre2_regex.h"

namespace seer {

struct PreTokenizerSpec {
  std::string name;  // canonical type, e.g. "llama3" for "llama-bpe"
  std::vector<std::string> regexes;
  bool ignore_merges = false;  // a whole word found in the vocabulary is one token
  bool add_bos = false;        // default when the GGUF does not say
};

// The spec for a `tokenizer.ggml.pre` value ("" means llama.cpp's default). Throws
// seer::Error naming the value when it is unknown.
PreTokenizerSpec pretokenizer_spec(const std::string& pre);
// Every pre value pretokenizer_spec accepts.
std::vector<std::string> known_pretokenizers();

// Rewrites \s and \S to the Unicode White_Space set that llama.cpp (and Python/Rust
// regex engines) use; PCRE2's \s also matches U+180E.
std::string with_unicode_whitespace(const std::string& pattern);

class BpePreTokenizer {
 public:
  explicit BpePreTokenizer(const PreTokenizerSpec& spec);
  // Words of `text`, which must be valid UTF-8 (seer::Error otherwise).
  std::vector<std::string> split(std::string_view text) const;

 private:
  std::vector<std::unique_ptr<Pcre2Regex>> regexes_;
};

}  // namespace seer
