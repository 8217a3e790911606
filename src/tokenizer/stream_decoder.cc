#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8.h"

namespace seer {

std::string StreamDecoder::push(int32_t id) {
  // A BOS that is a text token is text: llama.cpp's default BOS of a byte-level BPE
  // vocabulary that names none is id 11, "," in GPT-2's and Qwen's vocabularies.
  if (id == tok_.bos_id() && tok_.token_type(id) == TokenType::Control) {
    after_bos_ = true;
    return {};
  }
  std::string piece = tok_.token_bytes(id);
  if (piece.empty()) return {};
  if ((first_ || after_bos_) && tok_.add_space_prefix() && piece[0] == ' ') piece.erase(0, 1);
  first_ = false;
  after_bos_ = false;
  pending_ += piece;
  std::string out;
  utf8::drain_complete(pending_, out);
  return out;
}

std::string StreamDecoder::flush() {
  std::string out = utf8::sanitize(pending_);
  pending_.clear();
  return out;
}

}  // namespace seer
