// StreamDecoder never emits half a UTF-8 character, whatever the token boundaries.
#include <gtest/gtest.h>

#include "model/gguf_file.h"
#include "support/test_paths.h"
#include "tokenizer/toy_vocab.h"
#include "tokenizer/utf8.h"

namespace seer {
namespace {

using testing::ToyToken;

int32_t byte_id(uint8_t b) { return 3 + b; }

std::unique_ptr<Tokenizer> toy() {
  auto t = testing::spm_base_tokens();
  t.push_back({"\u2581Hi", -1});            // 259
  t.push_back({"\u2581\xC3\xA9t\xC3\xA9", -1});  // 260 " été"
  return testing::toy_tokenizer("stream", "llama", "", t);
}

TEST(StreamDecoder, HoldsBackSplitCharacters) {
  auto tok = toy();
  StreamDecoder d(*tok);
  // 🦙 is F0 9F A6 99, sent as four byte tokens.
  EXPECT_EQ(d.push(259), " Hi");
  EXPECT_EQ(d.push(byte_id(0xF0)), "");
  EXPECT_EQ(d.push(byte_id(0x9F)), "");
  EXPECT_EQ(d.push(byte_id(0xA6)), "");
  EXPECT_EQ(d.push(byte_id(0x99)), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(d.push(byte_id('!')), "!");
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamDecoder, EveryChunkIsValidUtf8) {
  auto tok = toy();
  const std::string text = "\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80 ok";  // é € 😀
  std::vector<int32_t> ids;
  for (unsigned char c : text) ids.push_back(byte_id(c));
  StreamDecoder d(*tok);
  std::string all;
  for (int32_t id : ids) {
    const std::string chunk = d.push(id);
    EXPECT_TRUE(utf8::is_valid(chunk));
    all += chunk;
  }
  all += d.flush();
  EXPECT_EQ(all, text);
}

TEST(StreamDecoder, BadBytesBecomeReplacementCharacters) {
  auto tok = toy();
  StreamDecoder d(*tok);
  EXPECT_EQ(d.push(byte_id(0xE2)), "");
  EXPECT_EQ(d.push(byte_id('A')), "\xEF\xBF\xBD" "A");  // the E2 can no longer complete
  EXPECT_EQ(d.push(byte_id(0xF0)), "");
  EXPECT_EQ(d.flush(), "\xEF\xBF\xBD");  // incomplete at the end
  EXPECT_EQ(d.flush(), "");
}

TEST(StreamDecoder, LeadingSpaceOnlyStrippedAtSequenceStart) {
  auto tok = toy();
  StreamDecoder continuation(*tok);
  EXPECT_EQ(continuation.push(259), " Hi");
  StreamDecoder start(*tok, true);
  EXPECT_EQ(start.push(259), "Hi");
  EXPECT_EQ(start.push(259), " Hi");
  EXPECT_EQ(start.push(1), "");  // BOS: the next piece starts a sequence again
  EXPECT_EQ(start.push(260), "\xC3\xA9t\xC3\xA9");
  EXPECT_EQ(start.push(2), "");  // control tokens have no text
}

TEST(StreamDecoder, ConcatenationEqualsDecode) {
  SEER_REQUIRE_SHARED_FILE(path, "tokenizer-tests/ggml-vocab-gpt-2.gguf");
  auto tok = tokenizer_from_gguf(*GgufFile::open(path));
  const std::string text = "naïve 🦙🚀 日本語 — done";
  const auto ids = tok->encode(text, false);
  StreamDecoder d(*tok, true);
  std::string all;
  bool split_char_seen = false;
  for (int32_t id : ids) {
    const std::string bytes = tok->token_bytes(id);
    if (!utf8::is_valid(bytes)) split_char_seen = true;  // a token holding part of a character
    const std::string chunk = d.push(id);
    EXPECT_TRUE(utf8::is_valid(chunk));
    all += chunk;
  }
  all += d.flush();
  EXPECT_TRUE(split_char_seen) << "the text should exercise tokens that split a character";
  EXPECT_EQ(all, text);
  EXPECT_EQ(tok->decode(ids), text);
}

// A byte-level BPE vocabulary that names no BOS gets llama.cpp's default, id 11: a
// text token ("," in GPT-2's and Qwen's vocabularies), which decodes as text.
TEST(StreamDecoder, ABosThatIsATextTokenIsText) {
  auto tok = testing::toy_tokenizer("bos-text", "gpt2", "", testing::bpe_base_tokens());
  ASSERT_EQ(tok->bos_id(), 11);
  ASSERT_EQ(tok->token_type(11), TokenType::Normal);
  StreamDecoder d(*tok);
  EXPECT_EQ(d.push('a'), "a");
  EXPECT_EQ(d.push(11), tok->token_bytes(11));
  EXPECT_EQ(tok->decode({11, 11}), tok->token_bytes(11) + tok->token_bytes(11));
}

// A control BOS (SentencePiece's <s>) gives nothing.
TEST(StreamDecoder, AControlBosGivesNothing) {
  auto tok = toy();
  ASSERT_EQ(tok->token_type(tok->bos_id()), TokenType::Control);
  StreamDecoder d(*tok);
  EXPECT_EQ(d.push(tok->bos_id()), "");
  EXPECT_EQ(d.push(259), "Hi");  // the dummy-prefix space after BOS goes
}

}  // namespace
}  // namespace seer
