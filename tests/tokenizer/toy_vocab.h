#pragma once
// Small vocab-only GGUF files written on the fly, so tokenizer behaviour can be
// tested exactly without ../shared/data.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace seer {
class GgufWriter;
}

namespace seer::testing {

struct ToyToken {
  std::string text;
  float score = 0.0f;
  TokenType type = TokenType::Normal;
};

// <unk>, <s>, </s> (ids 0-2) and the byte tokens <0x00>..<0xFF> (ids 3-258).
std::vector<ToyToken> spm_base_tokens();
// The 256 one-character tokens of GPT-2's byte-to-unicode mapping, in byte order.
std::vector<ToyToken> bpe_base_tokens();

// Writes tokenizer.ggml.* (model "llama" or "gpt2", `pre` when not empty, the tokens,
// `merges` for gpt2, and whatever `extra` sets) to a scratch GGUF and returns its path.
std::string write_toy_vocab(const std::string& name, const std::string& model, const std::string& pre,
                            const std::vector<ToyToken>& tokens, const std::vector<std::string>& merges = {},
                            const std::function<void(GgufWriter&)>& extra = {});
// The same, loaded with tokenizer_from_gguf.
std::unique_ptr<Tokenizer> toy_tokenizer(const std::string& name, const std::string& model, const std::string& pre,
                                         const std::vector<ToyToken>& tokens, const std::vector<std::string>& merges = {},
                                         const std::function<void(GgufWriter&)>& extra = {});

}  // namespace seer::testing
