#pragma once
// Text <-> token ids. Built from GGUF metadata (SentencePiece-style `llama` vocab,
// byte-level BPE `gpt2` vocab) or from a llama2.c tokenizer.bin.
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace seer {

class GgufFile;

enum class TokenType : int32_t {  // as in GGUF tokenizer.ggml.token_type
  Undefined = 0,
  Normal = 1,
  Unknown = 2,
  Control = 3,
  UserDefined = 4,
  Unused = 5,
  Byte = 6,
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // add_special: prepend BOS / append EOS as the vocabulary's add-BOS/EOS rules say.
  // parse_special: recognise control-token text such as "<|im_start|>" in `text`
  // (user-defined tokens are always recognised, as in llama.cpp and HF tokenizers).
  // Text from a chat template must be encoded with parse_special = true.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special,
                                      bool parse_special = false) const = 0;
  // The raw bytes of one token (byte tokens decoded, SPM's U+2581 turned to a space,
  // BPE's byte-to-unicode mapping undone). May be part of a UTF-8 character. Control
  // and unknown tokens (BOS, EOS, <|im_end|>, ...) and ids out of range give "".
  virtual std::string token_bytes(int32_t id) const = 0;
  // Decodes a whole sequence into valid UTF-8 (ill-formed bytes become U+FFFD). The
  // space a dummy prefix put in front of the first text token (or of a token right
  // after BOS) is dropped, so decode(encode(s, true)) == s for ordinary text. Equals
  // the concatenated output of StreamDecoder(*this, true).
  virtual std::string decode(const std::vector<int32_t>& ids) const;

  // The vocabulary string of a token as stored ("▁Hello", "Ġworld", "<0x0A>", "<s>");
  // "" for ids out of range.
  virtual std::string token_text(int32_t id) const = 0;
  // The id whose vocabulary string is exactly `text`, or -1.
  virtual int32_t find_token(std::string_view text) const = 0;
  virtual TokenType token_type(int32_t id) const = 0;

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;  // -1 when the vocabulary has none
  virtual int32_t eos_id() const = 0;
  virtual bool add_bos() const = 0;
  virtual bool add_eos() const { return false; }
  // SentencePiece-style: a space is put in front of the text before encoding.
  virtual bool add_space_prefix() const { return false; }
  // End-of-generation tokens (EOS, <|eot_id|>, <|im_end|>, <|end|>, </s>, ...).
  virtual bool is_end_of_generation(int32_t id) const = 0;
  virtual std::vector<int32_t> end_of_generation_ids() const = 0;
  virtual std::string type_name() const = 0;  // "llama (SentencePiece)", "gpt2 (byte-level BPE): llama-bpe"
};

// Throws seer::Error when the vocabulary type or pre-tokenizer is unsupported,
// naming it.
std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f);
// llama2.c's tokenizer.bin (int32 max_token_length, then per token a float score, an
// int32 length and the bytes). vocab_size <= 0 reads every entry up to the end of
// the file. Throws seer::Error naming the file and offset when it is malformed.
std::unique_ptr<Tokenizer> tokenizer_from_llama2c(const std::string& path, int32_t vocab_size);

// Turns a token stream into text without ever emitting half a UTF-8 character.
class StreamDecoder {
 public:
  // strip_leading_space: the stream starts a sequence (as decode() does), so the
  // dummy-prefix space of the first text token is dropped. Leave it false when
  // streaming a continuation, e.g. generated tokens after a prompt.
  explicit StreamDecoder(const Tokenizer& tok, bool strip_leading_space = false)
      : tok_(tok), first_(strip_leading_space) {}
  // Returns the complete characters the new token finishes (possibly ""); ill-formed
  // bytes come out as U+FFFD, so the output is always valid UTF-8.
  std::string push(int32_t id);
  // Whatever is still pending (an incomplete character becomes U+FFFD).
  std::string flush();

 private:
  const Tokenizer& tok_;
  std::string pending_;
  bool first_ = true;       // the next text token is the first of the sequence
  bool after_bos_ = false;  // the previous token was BOS
};

}  // namespace seer
