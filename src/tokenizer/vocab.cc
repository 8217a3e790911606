#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <initializer_list>

#include "common/error.h"
#include "model/gguf_file.h"

namespace seer {

namespace {

TokenType token_type_from(int64_t v) {
  if (v < 0 || v > static_cast<int64_t>(TokenType::Byte)) return TokenType::Undefined;
  return static_cast<TokenType>(v);
}

bool has_any(const std::string& s, std::initializer_list<std::string_view> parts) {
  for (auto p : parts)
    if (s.find(p) != std::string::npos) return true;
  return false;
}

// Tokens that end a turn, found by their text as llama.cpp does (the converters do
// not always record them). Their type is forced to Control so they are never
// produced from plain text.
constexpr std::string_view kEndOfTurnTexts[] = {
    "<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<EOT>", "<｜end▁of▁sentence｜>",
};

void read_tokens(const GgufFile& f, Vocab& v) {
  const auto& tokens = f.get_array("tokenizer.ggml.tokens");
  if (tokens.empty()) fail("{}: tokenizer.ggml.tokens is empty", v.source);
  const size_t n = tokens.size();
  if (n > static_cast<size_t>(INT32_MAX)) fail("{}: tokenizer.ggml.tokens has {} entries", v.source, n);
  v.text.resize(n);
  v.score.assign(n, 0.0f);
  v.type.assign(n, TokenType::Normal);
  v.strip.assign(n, Vocab::kStripNone);
  v.index.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    std::string s = tokens[i].as_string("tokenizer.ggml.tokens");
    if (s.empty()) s = "[EMPTY_" + std::to_string(i) + "]";  // as llama.cpp: keeps the index unique
    v.text[i] = std::move(s);
    v.index[v.text[i]] = static_cast<int32_t>(i);
  }
  if (const GgufValue* scores = f.find("tokenizer.ggml.scores")) {
    const auto& a = scores->as_array("tokenizer.ggml.scores");
    if (a.size() != n) fail("{}: tokenizer.ggml.scores has {} entries, expected {} (one per token)", v.source, a.size(), n);
    for (size_t i = 0; i < n; ++i) v.score[i] = static_cast<float>(a[i].as_float("tokenizer.ggml.scores"));
  }
  if (const GgufValue* types = f.find("tokenizer.ggml.token_type")) {
    const auto& a = types->as_array("tokenizer.ggml.token_type");
    if (a.size() != n)
      fail("{}: tokenizer.ggml.token_type has {} entries, expected {} (one per token)", v.source, a.size(), n);
    for (size_t i = 0; i < n; ++i) v.type[i] = token_type_from(a[i].as_int("tokenizer.ggml.token_type"));
  }
}

void read_special_ids(const GgufFile& f, Vocab& v, const VocabDefaults& d) {
  v.bos = d.bos;
  v.eos = d.eos;
  v.unk = d.unk;
  auto read = [&](const char* key, int32_t& id) {
    if (auto x = f.find_int(key)) {
      if (*x >= 0 && *x < v.size()) id = static_cast<int32_t>(*x);  // out of range: keep the default, as llama.cpp
    }
  };
  read("tokenizer.ggml.bos_token_id", v.bos);
  read("tokenizer.ggml.eos_token_id", v.eos);
  read("tokenizer.ggml.unknown_token_id", v.unk);
  read("tokenizer.ggml.padding_token_id", v.pad);
  read("tokenizer.ggml.eot_token_id", v.eot);
  read("tokenizer.ggml.eom_token_id", v.eom);
  for (int32_t* id : {&v.bos, &v.eos, &v.unk})
    if (!v.valid(*id)) *id = -1;

  v.add_bos = d.add_bos;
  v.add_eos = d.add_eos;
  v.add_space_prefix = d.add_space_prefix;
  if (const GgufValue* b = f.find("tokenizer.ggml.add_bos_token")) v.add_bos = b->as_bool("tokenizer.ggml.add_bos_token");
  if (const GgufValue* b = f.find("tokenizer.ggml.add_eos_token")) v.add_eos = b->as_bool("tokenizer.ggml.add_eos_token");
  if (const GgufValue* b = f.find("tokenizer.ggml.add_space_prefix"))
    v.add_space_prefix = b->as_bool("tokenizer.ggml.add_space_prefix");
  if (v.bos < 0) v.add_bos = false;
  if (v.eos < 0) v.add_eos = false;
}

void find_end_of_generation(Vocab& v) {
  std::vector<int32_t> eog;
  for (std::string_view t : kEndOfTurnTexts) {
    const int32_t id = v.find(t);
    if (id < 0) continue;
    if (v.eot < 0 && t != "<|endoftext|>") v.eot = id;
    v.type[static_cast<size_t>(id)] = TokenType::Control;
    eog.push_back(id);
  }
  if (v.eot < 0) v.eot = v.find("<|endoftext|>");
  if (const int32_t id = v.find("<|eom_id|>"); id >= 0) {
    v.type[static_cast<size_t>(id)] = TokenType::Control;
    if (v.eom < 0) v.eom = id;
  }
  // "</s>" ends a turn in zephyr-style formats even where it is not the EOS token.
  if (const int32_t id = v.find("</s>"); id >= 0) eog.push_back(id);
  for (int32_t id : {v.eos, v.eot, v.eom})
    if (id >= 0) eog.push_back(id);
  std::sort(eog.begin(), eog.end());
  eog.erase(std::unique(eog.begin(), eog.end()), eog.end());
  v.eog = std::move(eog);
}

void collect_special(Vocab& v) {
  for (int32_t id = 0; id < v.size(); ++id) {
    const TokenType t = v.type[static_cast<size_t>(id)];
    if (t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown) v.special_by_length.push_back(id);
  }
  std::stable_sort(v.special_by_length.begin(), v.special_by_length.end(), [&](int32_t a, int32_t b) {
    return v.text[static_cast<size_t>(a)].size() > v.text[static_cast<size_t>(b)].size();
  });
}

// Whitespace stripping around special tokens is not in GGUF; llama.cpp sets it per
// model family and so do we.
void set_strip_attributes(const GgufFile& f, Vocab& v) {
  std::string name = f.find_string("general.name").value_or("");
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
  auto set = [&](std::string_view token, uint8_t bit, bool on) {
    const int32_t id = v.find(token);
    if (id < 0) return;
    auto& s = v.strip[static_cast<size_t>(id)];
    s = on ? (s | bit) : (s & ~bit);
  };
  if (has_any(v.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"})) {
    set("<mask>", Vocab::kStripLeft, true);
  } else if (has_any(name, {"phi-3", "phi3"})) {
    for (int32_t id : v.special_by_length) v.strip[static_cast<size_t>(id)] |= Vocab::kStripRight;
    set("</s>", Vocab::kStripRight, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set(t, Vocab::kStripRight, false);
  }
}

}  // namespace

bool Vocab::is_eog(int32_t id) const { return std::binary_search(eog.begin(), eog.end(), id); }

Vocab load_vocab(const GgufFile& f, const VocabDefaults& defaults) {
  Vocab v;
  v.source = f.path();
  v.model = f.get_string("tokenizer.ggml.model");
  v.pre = f.find_string("tokenizer.ggml.pre").value_or("");
  read_tokens(f, v);
  read_special_ids(f, v, defaults);
  find_end_of_generation(v);
  collect_special(v);
  set_strip_attributes(f, v);
  return v;
}

}  // namespace seer
