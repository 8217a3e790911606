#include "tokenizer/bpe_tokenizer.h"

#include <queue>

#include "model/gguf_file.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"

namespace seer {

namespace {

struct Symbol {
  int prev;
  int next;
  size_t offset;
  size_t length;  // 0 once merged into its left neighbour
  int32_t id;     // the token with this text, or -1
};

struct Bigram {
  int left;
  int right;
  int32_t rank;
  int32_t result;
  size_t left_length;
  size_t length;
};

// Lowest rank first; among equal ranks the leftmost pair.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

uint64_t pair_key(int32_t left, int32_t right) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(left)) << 32) | static_cast<uint32_t>(right);
}

}  // namespace

BpeTokenizer::BpeTokenizer(Vocab vocab, const std::vector<std::string>& merges, PreTokenizerSpec spec)
    : GgufTokenizer(std::move(vocab)), spec_(std::move(spec)), pre_(spec_) {
  token_merges_.reserve(merges.size());
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges[i];
    // Split at the first space after the first character (a merge may start with one);
    // a line without one names the empty pair, as in llama.cpp.
    const size_t pos = m.find(' ', 1);
    const std::string left = pos == std::string::npos ? std::string() : m.substr(0, pos);
    const std::string right = pos == std::string::npos ? std::string() : m.substr(pos + 1);
    const int32_t rank = static_cast<int32_t>(i);
    const int32_t l = vocab_.find(left), r = vocab_.find(right);
    if (l >= 0 && r >= 0) {
      token_merges_.emplace(pair_key(l, r), Merge{rank, vocab_.find(left + right)});  // the first (best) rank wins
    } else {
      text_merges_.emplace(left + " " + right, rank);
    }
  }
}

BpeTokenizer::Merge BpeTokenizer::find_merge(int32_t left_id, std::string_view left, int32_t right_id,
                                             std::string_view right) const {
  if (left_id >= 0 && right_id >= 0) {
    auto it = token_merges_.find(pair_key(left_id, right_id));
    return it == token_merges_.end() ? Merge{-1, -1} : it->second;
  }
  if (text_merges_.empty()) return {-1, -1};
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left).append(" ").append(right);
  auto it = text_merges_.find(key);
  if (it == text_merges_.end()) return {-1, -1};
  key.erase(left.size(), 1);
  return {it->second, vocab_.find(key)};
}

int32_t BpeTokenizer::merge_rank(std::string_view left, std::string_view right) const {
  return find_merge(vocab_.find(left), left, vocab_.find(right), right).rank;
}

std::string BpeTokenizer::type_name() const {
  return "gpt2 (byte-level BPE): " + (vocab_.pre.empty() ? std::string("default") : vocab_.pre);
}

void BpeTokenizer::encode_text(std::string_view raw, bool /*after_special*/, std::vector<int32_t>& out) const {
  // llama.cpp decodes to code points first, so ill-formed bytes are encoded as U+FFFD.
  const std::string text = utf8::encode(utf8::decode_lenient(raw));
  for (const std::string& word : pre_.split(text)) encode_word(byte_unicode::encode(word), out);
}

void BpeTokenizer::encode_word(const std::string& word, std::vector<int32_t>& out) const {
  if (spec_.ignore_merges) {
    if (const int32_t id = vocab_.find(word); id >= 0) {
      out.push_back(id);
      return;
    }
  }
  std::vector<Symbol> symbols;
  for (size_t off = 0; off < word.size();) {
    const size_t len = std::min(utf8::sequence_length(static_cast<unsigned char>(word[off])), word.size() - off);
    const int index = static_cast<int>(symbols.size());
    const int32_t id = vocab_.find(std::string_view(word.data() + off, len));
    symbols.push_back({index - 1, off + len == word.size() ? -1 : index + 1, off, len, id});
    off += len;
  }
  auto view = [&](const Symbol& s) { return std::string_view(word.data() + s.offset, s.length); };

  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue;
  auto try_add = [&](int left, int right) {
    if (left < 0 || right < 0) return;
    const Symbol& l = symbols[static_cast<size_t>(left)];
    const Symbol& r = symbols[static_cast<size_t>(right)];
    const Merge m = find_merge(l.id, view(l), r.id, view(r));
    if (m.rank < 0) return;
    queue.push({left, right, m.rank, m.result, l.length, l.length + r.length});
  };
  for (int i = 1; i < static_cast<int>(symbols.size()); ++i) try_add(i - 1, i);

  while (!queue.empty()) {
    const Bigram b = queue.top();
    queue.pop();
    Symbol& l = symbols[static_cast<size_t>(b.left)];
    Symbol& r = symbols[static_cast<size_t>(b.right)];
    // Symbols are fixed ranges of `word`, so equal lengths mean equal text.
    if (l.length != b.left_length || r.length != b.length - b.left_length || r.length == 0) continue;  // stale
    l.length += r.length;
    l.id = b.result;
    r.length = 0;
    l.next = r.next;
    if (r.next >= 0) symbols[static_cast<size_t>(r.next)].prev = b.left;
    try_add(l.prev, b.left);
    try_add(b.left, l.next);
  }

  for (int i = symbols.empty() ? -1 : 0; i != -1; i = symbols[static_cast<size_t>(i)].next) {
    const Symbol& s = symbols[static_cast<size_t>(i)];
    if (s.id >= 0) {
      out.push_back(s.id);
      continue;
    }
    for (char c : view(s)) {  // as llama.cpp: single bytes that happen to be tokens, the rest dropped
      if (const int32_t id = vocab_.find(std::string_view(&c, 1)); id >= 0) out.push_back(id);
    }
  }
}

std::string BpeTokenizer::token_bytes(int32_t id) const {
  if (!vocab_.valid(id)) return {};
  const std::string& t = vocab_.text[static_cast<size_t>(id)];
  switch (vocab_.type[static_cast<size_t>(id)]) {
    case TokenType::UserDefined:
      return t;  // matched in raw text, so stored as raw text
    case TokenType::Normal:
      return byte_unicode::decode(t);
    default:  // control, unknown, unused, byte, undefined: not text
      return {};
  }
}

std::unique_ptr<Tokenizer> bpe_tokenizer_from_gguf(const GgufFile& f) {
  const std::string pre = f.find_string("tokenizer.ggml.pre").value_or("");
  PreTokenizerSpec spec = pretokenizer_spec(pre);
  VocabDefaults d;  // llama.cpp's BPE defaults (its odd BOS/EOS 11 included)
  if (spec.name != "chatglm4") d.bos = 11;
  d.eos = 11;
  d.add_bos = spec.add_bos;
  Vocab vocab = load_vocab(f, d);
  vocab.add_space_prefix = false;  // byte-level BPE never adds one, whatever the file says
  const auto& arr = f.get_array("tokenizer.ggml.merges");
  std::vector<std::string> merges;
  merges.reserve(arr.size());
  for (const auto& m : arr) merges.push_back(m.as_string("tokenizer.ggml.merges"));
  return std::make_unique<BpeTokenizer>(std::move(vocab), merges, std::move(spec));
}

}  // namespace seer
