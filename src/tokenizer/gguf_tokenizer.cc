#include "tokenizer/gguf_tokenizer.h"

#include "tokenizer/special_tokens.h"

namespace seer {

std::vector<int32_t> GgufTokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos) out.push_back(vocab_.bos);
  bool after_special = true;
  for (const Fragment& f : partition_special(text, vocab_, parse_special)) {
    if (f.is_text()) {
      encode_text(text.substr(f.offset, f.length), after_special, out);
      after_special = false;
    } else {
      out.push_back(f.token);
      after_special = true;
    }
  }
  if (add_special && vocab_.add_eos) out.push_back(vocab_.eos);
  return out;
}

std::string GgufTokenizer::token_text(int32_t id) const {
  return vocab_.valid(id) ? vocab_.text[static_cast<size_t>(id)] : std::string();
}

}  // namespace seer
