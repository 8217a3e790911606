#include "tokenizer/spm_tokenizer.h"

#include <queue>

#include <fmt/format.h>

#include "tokenizer/utf8.h"

namespace seer {

namespace {

constexpr std::string_view kSpaceMark = "\xE2\x96\x81";  // U+2581, SentencePiece's visible space

struct Symbol {
  int prev;
  int next;
  size_t offset;
  size_t length;  // 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t length;
};

// Best score first; among equal scores the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

SpmTokenizer::SpmTokenizer(Vocab vocab) : GgufTokenizer(std::move(vocab)) {
  for (int b = 0; b < 256; ++b) {
    int32_t id = vocab_.find(fmt::format("<0x{:02X}>", b));
    if (id < 0) id = vocab_.find(std::string(1, static_cast<char>(b)));
    if (id < 0) id = vocab_.unk;
    byte_token_[static_cast<size_t>(b)] = id;
  }
  words_are_independent_ = true;
  for (const std::string& t : vocab_.text) {
    size_t p = 0;  // skip the leading run of space marks
    while (t.compare(p, kSpaceMark.size(), kSpaceMark) == 0) p += kSpaceMark.size();
    if (t.find(kSpaceMark, p) != std::string::npos) {
      words_are_independent_ = false;
      break;
    }
  }
}

void SpmTokenizer::encode_text(std::string_view raw, bool after_special, std::vector<int32_t>& out) const {
  std::string text;
  text.reserve(raw.size() * 3 + 3);
  if (vocab_.add_space_prefix && after_special) text += kSpaceMark;
  for (char c : raw) {
    if (c == ' ') {
      text += kSpaceMark;
    } else {
      text += c;
    }
  }
  if (!words_are_independent_) {
    encode_chunk(text, out);
    return;
  }
  // No token holds a space mark after another character, so no merge can cross the
  // start of a word and encoding word by word gives the same tokens with small
  // queues. Words are cut where a space mark follows another character, stepping by
  // symbols exactly as the merge does (ill-formed input included).
  const std::string_view all(text);
  size_t start = 0;
  bool prev_is_mark = false;
  for (size_t off = 0; off < all.size();) {
    const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(all[off])), all.size() - off);
    const bool is_mark = all.substr(off, len) == kSpaceMark;
    if (is_mark && !prev_is_mark && off > start) {
      encode_chunk(all.substr(start, off - start), out);
      start = off;
    }
    prev_is_mark = is_mark;
    off += len;
  }
  encode_chunk(all.substr(start), out);
}

void SpmTokenizer::encode_chunk(std::string_view text, std::vector<int32_t>& out) const {
  if (text.empty()) return;
  std::vector<Symbol> symbols;
  for (size_t off = 0; off < text.size();) {
    const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(text[off])), text.size() - off);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({index - 1, off + len == text.size() ? -1 : index + 1, off, len});
    off += len;
  }

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const std::string_view pair = text.substr(l.offset, l.length + r.length);
    const int32_t id = vocab_.find(pair);
    if (id < 0) return;
    queue.push({left, right, vocab_.score[static_cast<size_t>(id)], pair.size()});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    if (l.length == 0 || r.length == 0 || l.length + r.length != b.length) continue;  // stale
    l.length += r.length;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int i = 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = text.substr(s.offset, s.length);
    const int32_t id = vocab_.find(piece);
    if (id >= 0) {
      out.push_back(id);
      continue;
    }
    for (unsigned char c : piece) {
      const int32_t bt = byte_token_[c];
      if (bt >= 0) out.push_back(bt);
    }
  }
}

std::string SpmTokenizer::token_bytes(int32_t id) const {
  if (!vocab_.valid(id)) return {};
  const std::string& t = vocab_.text[static_cast<size_t>(id)];
  switch (vocab_.type[static_cast<size_t>(id)]) {
    case TokenType::UserDefined:
      return t;
    case TokenType::Normal: {
      std::string s;
      s.reserve(t.size());
      for (size_t i = 0; i < t.size();) {
        if (t.compare(i, kSpaceMark.size(), kSpaceMark) == 0) {
          s += ' ';
          i += kSpaceMark.size();
        } else {
          s += t[i++];
        }
      }
      return s;
    }
    case TokenType::Byte:
      if (t.size() == 6 && t.compare(0, 3, "<0x") == 0 && t[5] == '>' && hex_value(t[3]) >= 0 && hex_value(t[4]) >= 0)
        return std::string(1, static_cast<char>(hex_value(t[3]) * 16 + hex_value(t[4])));
      return {};
    default:  // control, unknown, unused, undefined: not text
      return {};
  }
}

}  // namespace seer

namespace seer {

std::unique_ptr<Tokenizer> spm_tokenizer_from_gguf(const GgufFile& f) {
  VocabDefaults d;  // llama.cpp's SPM defaults
  d.bos = 1;
  d.eos = 2;
  d.unk = 0;
  d.add_bos = true;
  d.add_space_prefix = true;
  return std::make_unique<SpmTokenizer>(load_vocab(f, d));
}

}  // namespace seer
