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
  // parse_special: recognise special-token text such as "<|im_start|>" in `text`.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_special,
                                      bool parse_special = false) const = 0;
  // The raw bytes of one token (byte tokens decoded, SPM's U+2581 turned to a space,
  // BPE's byte-to-unicode mapping undone). May be part of a UTF-8 character.
  virtual std::string token_bytes(int32_t id) const = 0;
  // Decodes a whole sequence (drops a leading space added as dummy prefix when
  // `skip_dummy_prefix`).
  virtual std::string decode(const std::vector<int32_t>& ids) const;

  virtual int32_t vocab_size() const = 0;
  virtual int32_t bos_id() const = 0;
  virtual int32_t eos_id() const = 0;
  virtual bool add_bos() const = 0;
  // End-of-generation tokens (EOS, <|eot_id|>, <|im_end|>, ...).
  virtual bool is_end_of_generation(int32_t id) const = 0;
  virtual std::string type_name() const = 0;  // "llama (SentencePiece)", "gpt2 (byte-level BPE): llama-bpe"
};

// Throws seer::Error when the vocabulary type or pre-tokenizer is unsupported,
// naming it.
std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f);
// llama2.c's tokenizer.bin (vocab_size entries of score + length-prefixed bytes).
std::unique_ptr<Tokenizer> tokenizer_from_llama2c(const std::string& path, int32_t vocab_size);

// Turns a token stream into text without ever emitting half a UTF-8 character.
class StreamDecoder {
 public:
  explicit StreamDecoder(const Tokenizer& tok) : tok_(tok) {}
  // Returns the complete characters the new token finishes (possibly "").
  std::string push(int32_t id);
  // Whatever is still pending (an incomplete character becomes U+FFFD).
  std::string flush();

 private:
  const Tokenizer& tok_;
  std::string pending_;
  bool first_ = true;
};

}  // namespace seer
