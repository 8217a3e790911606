// SentencePiece-style (`llama`) vocabularies: merge order by score, byte fallback,
// dummy prefix, special tokens and BOS/EOS rules on a toy vocabulary written on the
// fly, then round trips and known ids on the real Llama-2 vocabulary.
#include <gtest/gtest.h>

#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "support/test_paths.h"
#include "tokenizer/toy_vocab.h"

namespace seer {
namespace {

using Ids = std::vector<int32_t>;
using testing::ToyToken;

constexpr int32_t kSpace = 259, kA = 260, kB = 261, kSpaceA = 262, kAB = 263, kImStart = 264, kTool = 265, kC = 266,
                  kSpaceC = 267;

int32_t byte_id(uint8_t b) { return 3 + b; }

std::vector<ToyToken> toy_tokens(float space_a_score, float ab_score) {
  auto t = testing::spm_base_tokens();
  t.push_back({"\u2581", -5});
  t.push_back({"a", -3});
  t.push_back({"b", -3});
  t.push_back({"\u2581a", space_a_score});
  t.push_back({"ab", ab_score});
  t.push_back({"<|im_start|>", 0, TokenType::Control});
  t.push_back({"<tool>", 0, TokenType::UserDefined});
  t.push_back({"c", -3});
  t.push_back({"\u2581c", -2});
  return t;
}

std::unique_ptr<Tokenizer> toy(const std::string& name, const std::function<void(GgufWriter&)>& extra = {}) {
  return testing::toy_tokenizer(name, "llama", "", toy_tokens(-1.0f, -0.5f), {}, extra);
}

TEST(SpmTokenizer, MergesTheBestScoringPairFirst) {
  // "ab" becomes "▁ab": "ab" (-0.5) beats "▁a" (-1), and "▁ab" is not a token.
  EXPECT_EQ(toy("spm-ab")->encode("ab", false), (Ids{kSpace, kAB}));
  auto swapped = testing::toy_tokenizer("spm-a", "llama", "", toy_tokens(-0.5f, -1.0f));
  EXPECT_EQ(swapped->encode("ab", false), (Ids{kSpaceA, kB}));
}

TEST(SpmTokenizer, FallsBackToByteTokens) {
  EXPECT_EQ(toy("spm-bytes")->encode("a\xC3\xA9", false), (Ids{kSpaceA, byte_id(0xC3), byte_id(0xA9)}));
  EXPECT_EQ(toy("spm-tab")->encode("\t", false), (Ids{kSpace, byte_id('\t')}));
}

TEST(SpmTokenizer, DummyPrefixAndSpaces) {
  auto tok = toy("spm-spaces");
  EXPECT_EQ(tok->encode("a a", false), (Ids{kSpaceA, kSpaceA}));
  EXPECT_EQ(tok->encode(" a", false), (Ids{kSpace, kSpaceA}));
  EXPECT_TRUE(tok->encode("", false).empty());
  auto no_prefix = toy("spm-noprefix", [](GgufWriter& w) { w.set("tokenizer.ggml.add_space_prefix", gguf_bool(false)); });
  EXPECT_EQ(no_prefix->encode("ab", false), (Ids{kAB}));
}

TEST(SpmTokenizer, BosAndEosFollowTheMetadata) {
  auto tok = toy("spm-bos");
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->encode("ab", true), (Ids{1, kSpace, kAB}));
  EXPECT_EQ(tok->encode("", true), (Ids{1}));
  auto no_bos = toy("spm-nobos", [](GgufWriter& w) {
    w.set("tokenizer.ggml.add_bos_token", gguf_bool(false));
    w.set("tokenizer.ggml.add_eos_token", gguf_bool(true));
  });
  EXPECT_FALSE(no_bos->add_bos());
  EXPECT_EQ(no_bos->encode("ab", true), (Ids{kSpace, kAB, 2}));
}

TEST(SpmTokenizer, ControlTokensOnlyWithParseSpecial) {
  auto tok = toy("spm-special");
  EXPECT_EQ(tok->encode("<|im_start|>a", false, true), (Ids{kImStart, kSpaceA}));  // dummy prefix after a special
  const Ids plain = tok->encode("<|im_start|>a", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kImStart), 0);
  EXPECT_EQ(plain.front(), kSpace);
  EXPECT_EQ(tok->encode("<s>", false, true), (Ids{1}));
}

TEST(SpmTokenizer, UserDefinedTokensAreAlwaysMatched) {
  auto tok = toy("spm-user");
  EXPECT_EQ(tok->encode("c<tool>c", false, false), (Ids{kSpaceC, kTool, kSpaceC}));
}

TEST(SpmTokenizer, TokenBytesAndDecode) {
  auto tok = toy("spm-decode");
  EXPECT_EQ(tok->token_bytes(kSpaceA), " a");
  EXPECT_EQ(tok->token_bytes(byte_id('A')), "A");
  EXPECT_EQ(tok->token_bytes(1), "");  // control
  EXPECT_EQ(tok->token_bytes(0), "");  // unknown
  EXPECT_EQ(tok->token_bytes(kTool), "<tool>");
  EXPECT_EQ(tok->token_bytes(-1), "");
  EXPECT_EQ(tok->token_bytes(100000), "");
  EXPECT_EQ(tok->decode({1, kSpace, kAB}), "ab");
  EXPECT_EQ(tok->decode({kSpaceC, kSpace, kAB}), "c ab");
  for (const std::string s : {"ab", " a", "a\xC3\xA9 c", "\t\n"}) EXPECT_EQ(tok->decode(tok->encode(s, true)), s) << s;
}

TEST(SpmTokenizer, EndOfGenerationAndQueries) {
  auto tok = toy("spm-eog");
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_FALSE(tok->is_end_of_generation(1));
  EXPECT_EQ(tok->bos_id(), 1);
  EXPECT_EQ(tok->eos_id(), 2);
  EXPECT_EQ(tok->vocab_size(), 268);
  EXPECT_EQ(tok->find_token("\u2581a"), kSpaceA);
  EXPECT_EQ(tok->find_token("zz"), -1);
  EXPECT_EQ(tok->token_type(kTool), TokenType::UserDefined);
  EXPECT_EQ(tok->type_name(), "llama (SentencePiece)");
}

std::unique_ptr<Tokenizer> shared_tokenizer(const std::string& rel) {
  const std::string path = testing::shared_data_file(rel);
  if (path.empty()) return nullptr;
  return tokenizer_from_gguf(*GgufFile::open(path));
}

#define SHARED_TOKENIZER(var, rel)      \
  auto var = shared_tokenizer(rel);     \
  if (!var) GTEST_SKIP() << "../shared/data/" << (rel) << " not present; skipping"

const char* const kRoundTripTexts[] = {
    "Hello world",
    "  two leading spaces and a trailing one ",
    "Ünïcödé façade naïve",
    "日本語のテキストと中文",
    "emoji 🦙🚀 and a family 👨‍👩‍👧 (ZWJ)",
    "tabs\tand\nnewlines\r\n\n",
    "I've been 'told he's there, 'RE you sure?",
    "3.14159 ≈ π; x² + y² = z²",
};

TEST(SpmTokenizer, LlamaVocabularyKnownIds) {
  SHARED_TOKENIZER(tok, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(tok->encode("Hello world", true), (Ids{1, 15043, 3186}));
  EXPECT_EQ(tok->encode("Hello world", false), (Ids{15043, 3186}));
  EXPECT_EQ(tok->encode("<s>Hello", false, true), (Ids{1, 15043}));
  const Ids plain = tok->encode("<s>Hello", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0);
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_EQ(tok->end_of_generation_ids(), (Ids{2}));
}

TEST(SpmTokenizer, RoundTripsOnRealVocabularies) {
  for (const char* rel : {"tokenizer-tests/ggml-vocab-llama-spm.gguf", "tokenizer-tests/ggml-vocab-phi-3.gguf",
                          "tokenizer-tests/ggml-vocab-baichuan.gguf", "models/stories260K.gguf"}) {
    auto tok = shared_tokenizer(rel);
    if (!tok) continue;
    for (const char* s : kRoundTripTexts) {
      EXPECT_EQ(tok->decode(tok->encode(s, true)), s) << rel << ": " << s;
      EXPECT_EQ(tok->decode(tok->encode(s, false)), s) << rel << ": " << s;
    }
  }
}

TEST(SpmTokenizer, Phi3EndOfTurnTokens) {
  SHARED_TOKENIZER(tok, "tokenizer-tests/ggml-vocab-phi-3.gguf");
  EXPECT_TRUE(tok->is_end_of_generation(32000));  // <|endoftext|> (EOS)
  EXPECT_TRUE(tok->is_end_of_generation(32007));  // <|end|>
  EXPECT_FALSE(tok->is_end_of_generation(1));
  const Ids ids = tok->encode("<|user|>\nHi<|end|>\n<|assistant|>\n", true, true);
  ASSERT_GE(ids.size(), 3u);
  EXPECT_EQ(ids[0], 1);
  EXPECT_EQ(ids[1], tok->find_token("<|user|>"));
  EXPECT_NE(std::find(ids.begin(), ids.end(), 32007), ids.end());
}

}  // namespace
}  // namespace seer
