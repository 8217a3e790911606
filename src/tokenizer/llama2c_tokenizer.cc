#include "tokenizer/llama2c_tokenizer.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <queue>

#include "common/error.h"

namespace seer {

namespace {

// llama2.c's run.c starts its best score at -1e10, so pairs scoring lower never merge.
constexpr float kNoScore = -1e10f;

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

struct Pair {
  int left;
  int right;
  int32_t left_id;
  int32_t right_id;
  int32_t merged;
  float score;
};

struct PairOrder {
  bool operator()(const Pair& a, const Pair& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

}  // namespace

Llama2cTokenizer::Llama2cTokenizer(std::vector<std::string> pieces, std::vector<float> scores, std::string source)
    : pieces_(std::move(pieces)), scores_(std::move(scores)), source_(std::move(source)) {
  index_.reserve(pieces_.size());
  for (size_t i = 0; i < pieces_.size(); ++i) index_.emplace(pieces_[i], static_cast<int32_t>(i));
  if (pieces_.size() > 1) bos_ = 1;
  if (pieces_.size() > 2) eos_ = 2;
  words_are_independent_ = true;
  for (const std::string& p : pieces_) {
    const size_t lead = p.find_first_not_of(' ');
    if (lead != std::string::npos && p.find(' ', lead) != std::string::npos) {
      words_are_independent_ = false;
      break;
    }
  }
}

int32_t Llama2cTokenizer::find_token(std::string_view text) const {
  auto it = index_.find(text);
  return it == index_.end() ? -1 : it->second;
}

std::string Llama2cTokenizer::token_text(int32_t id) const {
  return id >= 0 && id < vocab_size() ? pieces_[static_cast<size_t>(id)] : std::string();
}

int Llama2cTokenizer::byte_value(int32_t id) const {
  const std::string& p = pieces_[static_cast<size_t>(id)];
  if (p.size() != 6 || p.compare(0, 3, "<0x") != 0 || p[5] != '>') return -1;
  const int hi = hex_value(p[3]), lo = hex_value(p[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

TokenType Llama2cTokenizer::token_type(int32_t id) const {
  if (id < 0 || id >= vocab_size()) return TokenType::Undefined;
  if (id == 0) return TokenType::Unknown;
  if (id == bos_ || id == eos_) return TokenType::Control;
  return byte_value(id) >= 0 ? TokenType::Byte : TokenType::Normal;
}

std::vector<int32_t> Llama2cTokenizer::end_of_generation_ids() const {
  return eos_ >= 0 ? std::vector<int32_t>{eos_} : std::vector<int32_t>{};
}

std::string Llama2cTokenizer::token_bytes(int32_t id) const {
  switch (token_type(id)) {
    case TokenType::Normal:
      return pieces_[static_cast<size_t>(id)];
    case TokenType::Byte:
      return std::string(1, static_cast<char>(byte_value(id)));
    default:
      return {};
  }
}

std::vector<int32_t> Llama2cTokenizer::encode(std::string_view text, bool add_special, bool /*parse_special*/) const {
  std::vector<int32_t> out;
  if (add_special && bos_ >= 0) out.push_back(bos_);
  if (text.empty()) return out;

  std::vector<Symbol> symbols;
  auto add = [&](int32_t id) {
    symbols.push_back({id, -1, -1, true});
  };
  if (const int32_t prefix = find_token(" "); prefix >= 0) add(prefix);
  // A lead byte and up to three following continuation bytes form one lookup, as in
  // run.c (which does not check the lead byte itself).
  for (size_t i = 0; i < text.size();) {
    size_t len = 1;
    while (i + len < text.size() && len < 4 && (static_cast<unsigned char>(text[i + len]) & 0xC0) == 0x80) ++len;
    const std::string_view chunk = text.substr(i, len);
    if (const int32_t id = find_token(chunk); id >= 0) {
      add(id);
    } else {
      for (unsigned char c : chunk)
        if (c + 3 < vocab_size()) add(static_cast<int32_t>(c) + 3);
    }
    i += len;
  }
  if (symbols.empty()) return out;

  // Chunks that no merge can cross (see words_are_independent_) are merged on their
  // own, which keeps the queues small; the result is the same as merging the whole.
  size_t start = 0;
  bool prev_is_space = false;
  for (size_t i = 0; i < symbols.size(); ++i) {
    const bool is_space = pieces_[static_cast<size_t>(symbols[i].id)] == " ";
    if (words_are_independent_ && is_space && !prev_is_space && i > start) {
      merge_range(symbols, start, i, out);
      start = i;
    }
    prev_is_space = is_space;
  }
  merge_range(symbols, start, symbols.size(), out);
  return out;
}

void Llama2cTokenizer::merge_range(std::vector<Symbol>& all, size_t begin, size_t end, std::vector<int32_t>& out) const {
  Symbol* symbols = all.data() + begin;
  const int n = static_cast<int>(end - begin);
  for (int i = 0; i < n; ++i) {
    symbols[i].prev = i - 1;
    symbols[i].next = i + 1 < n ? i + 1 : -1;
  }
  std::priority_queue<Pair, std::vector<Pair>, PairOrder> queue;
  std::string joined;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const int32_t a = symbols[left].id, b = symbols[right].id;
    joined.assign(pieces_[static_cast<size_t>(a)]).append(pieces_[static_cast<size_t>(b)]);
    const int32_t merged = find_token(joined);
    if (merged < 0 || !(scores_[static_cast<size_t>(merged)] > kNoScore)) return;
    queue.push({left, right, a, b, merged, scores_[static_cast<size_t>(merged)]});
  };
  for (int i = 1; i < n; ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Pair p = queue.top();
    queue.pop();
    Symbol& l = symbols[p.left];
    Symbol& r = symbols[p.right];
    if (!l.alive || !r.alive || l.next != p.right || l.id != p.left_id || r.id != p.right_id) continue;  // stale
    l.id = p.merged;
    r.alive = false;
    l.next = r.next;
    if (r.next >= 0) symbols[r.next].prev = p.left;
    try_add(l.prev, p.left);
    try_add(p.left, l.next);
  }
  for (int i = n > 0 ? 0 : -1; i != -1; i = symbols[i].next) out.push_back(symbols[i].id);
}

std::unique_ptr<Tokenizer> tokenizer_from_llama2c(const std::string& path, int32_t vocab_size) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open llama2.c tokenizer: {}", path, std::strerror(errno));
  const std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  size_t off = 0;
  auto read_i32 = [&](const char* what) {
    if (data.size() - off < 4) fail("{}: truncated at offset {}: expected {} (4 bytes)", path, off, what);
    int32_t v;
    std::memcpy(&v, data.data() + off, 4);
    off += 4;
    return v;
  };
  auto read_f32 = [&](const char* what) {
    if (data.size() - off < 4) fail("{}: truncated at offset {}: expected {} (4 bytes)", path, off, what);
    float v;
    std::memcpy(&v, data.data() + off, 4);
    off += 4;
    return v;
  };
  const int32_t max_len = read_i32("max_token_length");
  if (max_len <= 0) fail("{}: offset 0: max_token_length {} is not positive; not a llama2.c tokenizer", path, max_len);

  std::vector<std::string> pieces;
  std::vector<float> scores;
  const size_t cap = data.size() / 8;  // every entry takes at least 8 bytes
  const size_t want = vocab_size > 0 ? static_cast<size_t>(vocab_size) : cap;
  pieces.reserve(std::min(want, cap));
  scores.reserve(std::min(want, cap));
  while (pieces.size() < want && (vocab_size > 0 || off < data.size())) {
    const size_t entry = off;
    const float score = read_f32("a token score");
    const int32_t len = read_i32("a token length");
    if (len < 0 || static_cast<size_t>(len) > data.size() - off)
      fail("{}: token {} at offset {}: length {} does not fit in the {} bytes left", path, pieces.size(), entry, len,
           data.size() - off);
    pieces.emplace_back(data.data() + off, static_cast<size_t>(len));
    scores.push_back(score);
    off += static_cast<size_t>(len);
  }
  if (pieces.size() < 3) fail("{}: only {} tokens; a llama2.c tokenizer has <unk>, <s>, </s> first", path, pieces.size());
  return std::make_unique<Llama2cTokenizer>(std::move(pieces), std::move(scores), path);
}

}  // namespace seer
