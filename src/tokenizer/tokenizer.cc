#include "tokenizer/tokenizer.h"

#include "common/error.h"
#include "model/gguf_file.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/spm_tokenizer.h"

namespace seer {

std::string Tokenizer::decode(const std::vector<int32_t>& ids) const {
  StreamDecoder d(*this, /*strip_leading_space=*/true);
  std::string out;
  for (int32_t id : ids) out += d.push(id);
  out += d.flush();
  return out;
}

std::unique_ptr<Tokenizer> tokenizer_from_gguf(const GgufFile& f) {
  const GgufValue* model = f.find("tokenizer.ggml.model");
  if (!model) fail("{}: no tokenizer in this file (metadata tokenizer.ggml.model is missing)", f.path());
  const std::string& type = model->as_string("tokenizer.ggml.model");
  if (type == "llama") return spm_tokenizer_from_gguf(f);
  if (type == "gpt2") return bpe_tokenizer_from_gguf(f);
  const char* what = type == "bert" ? " (WordPiece)" : type == "t5" ? " (Unigram)" : type == "rwkv" ? " (RWKV)" : "";
  fail("{}: unsupported vocabulary type '{}'{} (tokenizer.ggml.model); seer supports 'llama' (SentencePiece) and "
       "'gpt2' (byte-level BPE)",
       f.path(), type, what);
}

}  // namespace seer
