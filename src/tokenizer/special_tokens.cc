#include "tokenizer/special_tokens.h"

#include <cctype>

#include "tokenizer/vocab.h"

namespace seer {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

// Splits one text fragment at every occurrence of `token` (id), eating whitespace
// next to it when the token's strip attributes say so.
void split_fragment(std::string_view text, const Fragment& frag, std::string_view token, int32_t id, uint8_t strip,
                    std::vector<Fragment>& out) {
  size_t base = frag.offset;
  size_t len = frag.length;
  while (true) {
    const size_t match = text.find(token, base);
    if (match == std::string_view::npos || match + token.size() > base + len) break;
    if (match > base) {
      size_t left_len = match - base;
      if (strip & Vocab::kStripLeft)
        while (left_len > 0 && is_space(text[base + left_len - 1])) --left_len;
      if (left_len > 0) out.push_back({-1, base, left_len});
    }
    out.push_back({id, match, token.size()});
    size_t right = match + token.size();
    size_t right_len = base + len - right;
    if (strip & Vocab::kStripRight)
      while (right_len > 0 && is_space(text[right])) ++right, --right_len;
    base = right;
    len = right_len;
    if (len == 0) return;
  }
  out.push_back({-1, base, len});
}

}  // namespace

std::vector<Fragment> partition_special(std::string_view text, const Vocab& vocab, bool parse_special) {
  std::vector<Fragment> frags;
  if (text.empty()) return frags;
  frags.push_back({-1, 0, text.size()});
  std::vector<Fragment> next;
  for (int32_t id : vocab.special_by_length) {
    const TokenType type = vocab.type_of(id);
    if (!parse_special && (type == TokenType::Control || type == TokenType::Unknown)) continue;
    const std::string& token = vocab.text[static_cast<size_t>(id)];
    if (text.find(token) == std::string_view::npos) continue;  // cheap reject for the common case
    next.clear();
    for (const Fragment& f : frags) {
      if (f.is_text()) {
        split_fragment(text, f, token, id, vocab.strip[static_cast<size_t>(id)], next);
      } else {
        next.push_back(f);
      }
    }
    frags.swap(next);
  }
  return frags;
}

}  // namespace seer
