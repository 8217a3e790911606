#pragma once
// Tokenizer metadata for generated models: a byte-level SentencePiece-style ("llama")
// vocabulary, or the tokenizer.* keys copied from another GGUF.
#include <cstdint>

namespace seer {

class GgufFile;
class GgufWriter;

// Smallest vocabulary add_byte_level_vocab accepts: <unk>, <s>, </s> and 256 bytes.
constexpr int kByteVocabSize = 259;

// Writes tokenizer.ggml.* for a vocabulary of `vocab_size` (>= kByteVocabSize) tokens:
// "<unk>" (type unknown), "<s>", "</s>" (control), "<0x00>".."<0xFF>" (byte), then
// distinct printable pieces "▁tok<i>" (normal) up to vocab_size. BOS 1, EOS 2, add BOS.
void add_byte_level_vocab(GgufWriter& w, int vocab_size);

// Copies every tokenizer.* key of `src` and returns its token count (the size of
// tokenizer.ggml.tokens). Throws seer::Error naming the file when it has no tokens.
int copy_tokenizer(GgufWriter& w, const GgufFile& src);

}  // namespace seer
