#pragma once
// A Hugging Face `tokenizer.json` as GGUF tokenizer metadata, written the way
// llama.cpp's convert_hf_to_gguf.py writes it for byte-level BPE ("gpt2")
// vocabularies: one token per id up to the largest (gaps become "[PADi]", unused),
// added tokens as control (special, or looking special: "<|...|>") or user-defined,
// the merges as "a b" strings, and tokenizer.ggml.pre as given (llama.cpp picks it by
// hashing the tokenizer's output; here the caller names it). Beside the file, as
// gguf-py's SpecialVocab reads them: tokenizer_config.json (BOS/EOS/padding, whether
// they are added, the chat template), config.json (*_token_id where the former has
// none), chat_template.jinja or .json (where the former has no template).
#include <string>

namespace seer {

class GgufWriter;

struct HfVocabOptions {
  std::string tokenizer_json;  // path of tokenizer.json
  std::string pre;             // tokenizer.ggml.pre, e.g. "llama-bpe", "qwen2"
};

// Sets tokenizer.* metadata on `w`; returns the vocabulary size. Throws seer::Error
// naming the file for anything it cannot convert (a SentencePiece-style, Unigram or
// WordPiece model, a missing or mistyped field). The pre-tokenizer name is not
// checked here: the tokenizer checks it when the written file is loaded.
int write_hf_vocab(GgufWriter& w, const HfVocabOptions& opt);

}  // namespace seer
