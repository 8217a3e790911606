#include "tokenizer/toy_vocab.h"

#include <fmt/format.h>

#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "support/test_paths.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/utf8.h"

namespace seer::testing {

std::vector<ToyToken> spm_base_tokens() {
  std::vector<ToyToken> t = {{"<unk>", 0, TokenType::Unknown}, {"<s>", 0, TokenType::Control}, {"</s>", 0, TokenType::Control}};
  for (int b = 0; b < 256; ++b) t.push_back({fmt::format("<0x{:02X}>", b), 0, TokenType::Byte});
  return t;
}

std::vector<ToyToken> bpe_base_tokens() {
  std::vector<ToyToken> t;
  for (int b = 0; b < 256; ++b) {
    std::string s;
    utf8::append(s, byte_unicode::byte_to_codepoint(static_cast<uint8_t>(b)));
    t.push_back({s, 0, TokenType::Normal});
  }
  return t;
}

std::string write_toy_vocab(const std::string& name, const std::string& model, const std::string& pre,
                            const std::vector<ToyToken>& tokens, const std::vector<std::string>& merges,
                            const std::function<void(GgufWriter&)>& extra) {
  GgufWriter w;
  std::vector<std::string> texts;
  std::vector<float> scores;
  std::vector<int32_t> types;
  for (const auto& t : tokens) {
    texts.push_back(t.text);
    scores.push_back(t.score);
    types.push_back(static_cast<int32_t>(t.type));
  }
  w.set("general.name", gguf_string(name));
  w.set("tokenizer.ggml.model", gguf_string(model));
  if (!pre.empty()) w.set("tokenizer.ggml.pre", gguf_string(pre));
  w.set("tokenizer.ggml.tokens", gguf_string_array(texts));
  w.set("tokenizer.ggml.scores", gguf_f32_array(scores));
  w.set("tokenizer.ggml.token_type", gguf_i32_array(types));
  if (model == "gpt2") w.set("tokenizer.ggml.merges", gguf_string_array(merges));
  if (extra) extra(w);
  const std::string path = scratch_dir() + "/" + name + ".gguf";
  w.begin(path);
  w.finish();
  return path;
}

std::unique_ptr<Tokenizer> toy_tokenizer(const std::string& name, const std::string& model, const std::string& pre,
                                         const std::vector<ToyToken>& tokens, const std::vector<std::string>& merges,
                                         const std::function<void(GgufWriter&)>& extra) {
  auto f = GgufFile::open(write_toy_vocab(name, model, pre, tokens, merges, extra));
  return tokenizer_from_gguf(*f);
}

}  // namespace seer::testing
