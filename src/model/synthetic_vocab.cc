#include "model/synthetic_vocab.h"

#include <fmt/format.h>

#include <string>
#include <vector>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"

namespace seer {

void add_byte_level_vocab(GgufWriter& w, int vocab_size) {
  if (vocab_size < kByteVocabSize)
    fail("a byte-level vocabulary needs at least {} tokens (3 special + 256 bytes), got {}", kByteVocabSize,
         vocab_size);
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<int32_t> types = {2, 3, 3};  // unknown, control, control
  tokens.reserve(static_cast<size_t>(vocab_size));
  for (int b = 0; b < 256; ++b) {
    tokens.push_back(fmt::format("<0x{:02X}>", b));
    types.push_back(6);  // byte
  }
  // Filler pieces: distinct, printable, type normal. Their scores rank them like
  // SentencePiece does (earlier pieces preferred), the specials and bytes score 0.
  std::vector<float> scores(tokens.size(), 0.0f);
  for (int i = kByteVocabSize; i < vocab_size; ++i) {
    tokens.push_back(fmt::format("\u2581tok{}", i));
    types.push_back(1);
    scores.push_back(-static_cast<float>(i - kByteVocabSize + 1));
  }
  w.set("tokenizer.ggml.model", gguf_string("llama"));
  w.set("tokenizer.ggml.tokens", gguf_string_array(tokens));
  w.set("tokenizer.ggml.scores", gguf_f32_array(scores));
  w.set("tokenizer.ggml.token_type", gguf_i32_array(types));
  w.set("tokenizer.ggml.unknown_token_id", gguf_u32(0));
  w.set("tokenizer.ggml.bos_token_id", gguf_u32(1));
  w.set("tokenizer.ggml.eos_token_id", gguf_u32(2));
  w.set("tokenizer.ggml.add_bos_token", gguf_bool(true));
  w.set("tokenizer.ggml.add_eos_token", gguf_bool(false));
}

int copy_tokenizer(GgufWriter& w, const GgufFile& src) {
  const GgufValue* tokens = src.find("tokenizer.ggml.tokens");
  if (!tokens) fail("{}: has no tokenizer (metadata 'tokenizer.ggml.tokens' is missing)", src.path());
  size_t n = tokens->as_array("tokenizer.ggml.tokens").size();
  if (n == 0) fail("{}: metadata 'tokenizer.ggml.tokens' is empty", src.path());
  for (const auto& [key, value] : src.metadata())
    if (key.rfind("tokenizer.", 0) == 0) w.set(key, value);
  return static_cast<int>(n);
}

}  // namespace seer
