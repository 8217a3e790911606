// llama2.c tokenizer.bin: reading, run.c-style encoding (compared with the SPM
// tokenizer on the same Llama-2 vocabulary), decoding and malformed files.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "common/error.h"
#include "model/gguf_file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

using Ids = std::vector<int32_t>;

// A tokenizer.bin with <unk>, <s>, </s>, the 256 byte tokens and `pieces`.
std::string write_bin(const std::string& name, const std::vector<std::pair<std::string, float>>& pieces) {
  std::vector<std::pair<std::string, float>> all = {{"<unk>", 0}, {"\n<s>\n", 0}, {"\n</s>\n", 0}};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    all.push_back({buf, 0});
  }
  all.insert(all.end(), pieces.begin(), pieces.end());
  const std::string path = testing::scratch_dir() + "/" + name + ".bin";
  std::ofstream out(path, std::ios::binary);
  const int32_t max_len = 16;
  out.write(reinterpret_cast<const char*>(&max_len), 4);
  for (const auto& [s, score] : all) {
    const int32_t len = static_cast<int32_t>(s.size());
    out.write(reinterpret_cast<const char*>(&score), 4);
    out.write(reinterpret_cast<const char*>(&len), 4);
    out.write(s.data(), len);
  }
  return path;
}

constexpr int32_t kSpace = 259, kA = 260, kSpaceA = 261, kAB = 262;

std::unique_ptr<Tokenizer> toy() {
  return tokenizer_from_llama2c(write_bin("toy", {{" ", -5}, {"a", -3}, {" a", -1}, {"ab", -0.5f}, {"b", -3}}), 0);
}

TEST(Llama2cTokenizer, EncodesLikeRunC) {
  auto tok = toy();
  EXPECT_EQ(tok->vocab_size(), 264);
  EXPECT_EQ(tok->encode("ab", false), (Ids{kSpace, kAB}));   // "ab" outscores " a"
  EXPECT_EQ(tok->encode("ab", true), (Ids{1, kSpace, kAB}));  // BOS, no EOS
  EXPECT_EQ(tok->encode("a\xC3\xA9", false), (Ids{kSpaceA, 3 + 0xC3, 3 + 0xA9}));  // byte fallback at byte + 3
  EXPECT_TRUE(tok->encode("", false).empty());
  EXPECT_EQ(tok->encode("", true), (Ids{1}));
}

TEST(Llama2cTokenizer, DecodeStripsTheSpaceAfterBosAndReadsBytePieces) {
  auto tok = toy();
  EXPECT_EQ(tok->token_bytes(kSpaceA), " a");
  EXPECT_EQ(tok->token_bytes(3 + 'A'), "A");
  EXPECT_EQ(tok->token_bytes(1), "");
  EXPECT_EQ(tok->decode({1, kSpaceA, kSpaceA}), "a a");
  EXPECT_EQ(tok->decode(tok->encode("a\xC3\xA9 ab", true)), "a\xC3\xA9 ab");
  EXPECT_TRUE(tok->is_end_of_generation(2));
  EXPECT_EQ(tok->token_type(3), TokenType::Byte);
  EXPECT_EQ(tok->token_type(1), TokenType::Control);
}

TEST(Llama2cTokenizer, ReadsOnlyTheRequestedVocabulary) {
  const std::string path = write_bin("limited", {{" ", -5}, {"a", -3}});
  EXPECT_EQ(tokenizer_from_llama2c(path, 260)->vocab_size(), 260);
  EXPECT_THROW(tokenizer_from_llama2c(path, 300), Error);  // fewer entries than the model needs
}

TEST(Llama2cTokenizer, MalformedFilesGiveErrors) {
  const std::string dir = testing::scratch_dir();
  auto write = [&](const std::string& name, const std::string& bytes) {
    std::ofstream(dir + "/" + name, std::ios::binary) << bytes;
    return dir + "/" + name;
  };
  EXPECT_THROW(tokenizer_from_llama2c(dir + "/missing.bin", 0), Error);
  EXPECT_THROW(tokenizer_from_llama2c(write("empty.bin", ""), 0), Error);
  std::string bad_len(4, '\0');
  bad_len[0] = 8;
  bad_len += std::string(4, '\0');           // score
  bad_len += std::string("\xff\xff\xff\x7f", 4);  // length 2^31-1
  try {
    tokenizer_from_llama2c(write("bad-len.bin", bad_len), 0);
    FAIL() << "expected seer::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4"), std::string::npos) << e.what();
  }
}

TEST(Llama2cTokenizer, AgreesWithTheGgufLlamaVocabulary) {
  SEER_REQUIRE_SHARED_FILE(bin, "models/llama2-tokenizer.bin");
  SEER_REQUIRE_SHARED_FILE(gguf, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  auto l2c = tokenizer_from_llama2c(bin, 32000);
  auto spm = tokenizer_from_gguf(*GgufFile::open(gguf));
  EXPECT_EQ(l2c->vocab_size(), 32000);
  for (const char* s : {"Hello world", "The quick brown fox jumps over the lazy dog.",
                        "Once upon a time, there was a little girl named Lily.", "I've been 'told he's there",
                        "3.14159 is pi", "  indented  text ", "naïve café", "日本語", "🦙 llama"}) {
    const Ids ids = l2c->encode(s, true);
    EXPECT_EQ(ids, spm->encode(s, true)) << s;
    EXPECT_EQ(l2c->decode(ids), s) << s;
  }
  EXPECT_EQ(l2c->encode("Hello world", true), (Ids{1, 15043, 3186}));
}

}  // namespace
}  // namespace seer
