// Byte-level BPE (`gpt2`) vocabularies: merge ranks, special and user-defined
// tokens, BOS rules and losslessness on a toy vocabulary, then known ids and round
// trips on the real ones.
#include <gtest/gtest.h>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "support/test_paths.h"
#include "tokenizer/byte_unicode.h"
#include "tokenizer/toy_vocab.h"

namespace seer {
namespace {

using Ids = std::vector<int32_t>;
using testing::ToyToken;

constexpr int32_t kHe = 256, kSpaceT = 257, kSpaceThe = 258, kTh = 259, kEndOfText = 260, kUser = 261, kSpaceThere = 262;

int32_t byte_id(char c) { return static_cast<uint8_t>(c); }

std::vector<ToyToken> toy_tokens() {
  auto t = testing::bpe_base_tokens();
  t.push_back({"he"});
  t.push_back({"\u0120t"});  // "Ġt"
  t.push_back({"\u0120the"});
  t.push_back({"th"});
  t.push_back({"<|endoftext|>", 0, TokenType::Control});
  t.push_back({"<|user|>", 0, TokenType::UserDefined});
  t.push_back({"\u0120there"});  // reachable only without merges (llama-bpe's ignore_merges)
  return t;
}

const std::vector<std::string> kMerges = {"h e", "\u0120 t", "\u0120t he", "t h"};

std::unique_ptr<Tokenizer> toy(const std::string& name, const std::string& pre = "gpt-2",
                               const std::function<void(GgufWriter&)>& extra = {}) {
  return testing::toy_tokenizer(name, "gpt2", pre, toy_tokens(), kMerges, extra);
}

TEST(BpeTokenizer, MergesByRank) {
  auto tok = toy("bpe-rank");
  EXPECT_EQ(tok->encode(" the", false), (Ids{kSpaceThe}));
  // "he" (rank 0) is merged before "th" (rank 3), and "t he" is no merge.
  EXPECT_EQ(tok->encode("the", false), (Ids{byte_id('t'), kHe}));
  EXPECT_EQ(tok->encode(" there", false), (Ids{kSpaceThe, byte_id('r'), byte_id('e')}));
}

TEST(BpeTokenizer, IgnoreMergesTakesWholeWords) {
  EXPECT_EQ(toy("bpe-llama3", "llama-bpe")->encode(" there", false), (Ids{kSpaceThere}));
}

TEST(BpeTokenizer, ControlTokensOnlyWithParseSpecial) {
  auto tok = toy("bpe-special");
  EXPECT_EQ(tok->encode("the<|endoftext|>", false, true), (Ids{byte_id('t'), kHe, kEndOfText}));
  const Ids plain = tok->encode("<|endoftext|>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), kEndOfText), 0);
  EXPECT_EQ(plain.front(), byte_id('<'));
}

TEST(BpeTokenizer, UserDefinedTokensAreAlwaysMatched) {
  EXPECT_EQ(toy("bpe-user")->encode("x<|user|>y", false, false), (Ids{byte_id('x'), kUser, byte_id('y')}));
}

TEST(BpeTokenizer, BosOnlyWhenTheVocabularySaysSo) {
  auto tok = toy("bpe-nobos");
  EXPECT_FALSE(tok->add_bos());
  EXPECT_EQ(tok->encode("he", true), (Ids{kHe}));
  auto with_bos = toy("bpe-bos", "gpt-2", [](GgufWriter& w) {
    w.set("tokenizer.ggml.bos_token_id", gguf_u32(kEndOfText));
    w.set("tokenizer.ggml.eos_token_id", gguf_u32(kEndOfText));
    w.set("tokenizer.ggml.add_bos_token", gguf_bool(true));
  });
  EXPECT_TRUE(with_bos->add_bos());
  EXPECT_EQ(with_bos->encode("he", true), (Ids{kEndOfText, kHe}));
  EXPECT_EQ(with_bos->encode("he", false), (Ids{kHe}));
  // Llama 3's pre-tokenizer adds BOS unless the file says otherwise.
  auto llama3 = toy("bpe-llama3-bos", "llama-bpe",
                    [](GgufWriter& w) { w.set("tokenizer.ggml.bos_token_id", gguf_u32(kEndOfText)); });
  EXPECT_TRUE(llama3->add_bos());
}

TEST(BpeTokenizer, EndOfTextIsEndOfGeneration) {
  auto tok = toy("bpe-eog");
  EXPECT_TRUE(tok->is_end_of_generation(kEndOfText));
  EXPECT_FALSE(tok->is_end_of_generation(kHe));
}

TEST(BpeTokenizer, LosslessForAnyText) {
  auto tok = toy("bpe-lossless");
  EXPECT_EQ(tok->token_bytes(kSpaceThe), " the");
  EXPECT_EQ(tok->token_bytes(kEndOfText), "");
  EXPECT_EQ(tok->token_bytes(kUser), "<|user|>");
  for (const std::string s : {"the there", "  \t\n x", "Ünï 🦙 日本", "<|user|> hi"})
    EXPECT_EQ(tok->decode(tok->encode(s, false)), s) << s;
  // Ill-formed input bytes are encoded as U+FFFD, as llama.cpp does.
  EXPECT_EQ(tok->decode(tok->encode("bad \xFF!", false)), "bad \xEF\xBF\xBD!");
}

TEST(BpeTokenizer, TypeNameNamesThePreTokenizer) {
  EXPECT_EQ(toy("bpe-name", "llama-bpe")->type_name(), "gpt2 (byte-level BPE): llama-bpe");
  EXPECT_EQ(toy("bpe-default", "")->type_name(), "gpt2 (byte-level BPE): default");
}

TEST(BpeTokenizer, RejectsUnsupportedFilesByName) {
  auto expect_error = [](const std::string& path, const std::string& needle) {
    try {
      tokenizer_from_gguf(*GgufFile::open(path));
      ADD_FAILURE() << "expected seer::Error mentioning " << needle;
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
    }
  };
  expect_error(testing::write_toy_vocab("bad-pre", "gpt2", "klingon-bpe", toy_tokens(), kMerges), "klingon-bpe");
  expect_error(testing::write_toy_vocab("bad-model", "bert", "", toy_tokens()), "'bert'");
  GgufWriter w;  // gpt2 without merges
  w.set("tokenizer.ggml.model", gguf_string("gpt2"));
  w.set("tokenizer.ggml.tokens", gguf_string_array({"a", "b"}));
  const std::string no_merges = testing::scratch_dir() + "/no-merges.gguf";
  w.begin(no_merges);
  w.finish();
  expect_error(no_merges, "tokenizer.ggml.merges");
}

TEST(BpeTokenizer, MismatchedArraysAreRejected) {
  GgufWriter w;
  w.set("tokenizer.ggml.model", gguf_string("llama"));
  w.set("tokenizer.ggml.tokens", gguf_string_array({"<unk>", "<s>", "</s>"}));
  w.set("tokenizer.ggml.scores", gguf_f32_array({0.0f}));
  const std::string path = testing::scratch_dir() + "/short-scores.gguf";
  w.begin(path);
  w.finish();
  EXPECT_THROW(tokenizer_from_gguf(*GgufFile::open(path)), Error);
}

std::unique_ptr<Tokenizer> shared_tokenizer(const std::string& rel) {
  const std::string path = testing::shared_data_file(rel);
  if (path.empty()) return nullptr;
  return tokenizer_from_gguf(*GgufFile::open(path));
}

TEST(BpeTokenizer, Gpt2KnownIds) {
  auto tok = shared_tokenizer("tokenizer-tests/ggml-vocab-gpt-2.gguf");
  if (!tok) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  EXPECT_EQ(tok->encode("Hello world", false), (Ids{15496, 995}));
  EXPECT_EQ(tok->encode("Hello world", true), (Ids{15496, 995}));  // gpt-2 adds no BOS
  EXPECT_EQ(tok->encode("<|endoftext|>", false, true), (Ids{50256}));
  EXPECT_TRUE(tok->is_end_of_generation(50256));
  EXPECT_EQ(tok->token_bytes(995), " world");
}

TEST(BpeTokenizer, RoundTripsOnRealVocabularies) {
  const char* const texts[] = {
      "Hello world", "  two leading spaces\tand tabs\n\n", "Ünïcödé façade", "日本語のテキストと中文",
      "emoji 🦙🚀 👨‍👩‍👧", "I've been 'told he's there", "3.14159 ≈ π; x² = 1000000",
  };
  int checked = 0;
  for (const char* name : {"gpt-2", "falcon", "mpt", "starcoder", "refact", "deepseek-coder", "deepseek-llm", "gpt-neox"}) {
    auto tok = shared_tokenizer(std::string("tokenizer-tests/ggml-vocab-") + name + ".gguf");
    if (!tok) continue;
    ++checked;
    for (const char* s : texts) EXPECT_EQ(tok->decode(tok->encode(s, false)), s) << name << ": " << s;
  }
  if (checked == 0) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
}

TEST(BpeTokenizer, DeepseekAddsBosFromMetadata) {
  auto tok = shared_tokenizer("tokenizer-tests/ggml-vocab-deepseek-llm.gguf");
  if (!tok) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  EXPECT_TRUE(tok->add_bos());
  const Ids ids = tok->encode("Hi", true);
  ASSERT_FALSE(ids.empty());
  EXPECT_EQ(ids.front(), 100000);
  EXPECT_TRUE(tok->is_end_of_generation(100001));
}

}  // namespace
}  // namespace seer
