#pragma once
// Splits text into plain-text fragments and special tokens before the main
// tokenizer runs, as llama.cpp does: candidates are tried longest first, each one
// splitting every remaining text fragment at all its occurrences. Control and
// unknown tokens are matched only when parse_special is set; user-defined tokens
// always (HF tokenizers treat them as added tokens).
#include <cstdint>
#include <string_view>
#include <vector>

namespace seer {

struct Vocab;

struct Fragment {
  int32_t token = -1;  // >= 0: a special token; else the text [offset, offset + length)
  size_t offset = 0;
  size_t length = 0;
  bool is_text() const { return token < 0; }
};

std::vector<Fragment> partition_special(std::string_view text, const Vocab& vocab, bool parse_special);

}  // namespace seer
