#include <gtest/gtest.h>

#include "tokenizer/utf8.h"

namespace seer::utf8 {
namespace {

const std::string kFffd = "\xEF\xBF\xBD";

TEST(Utf8, SequenceLengthFromLeadByte) {
  EXPECT_EQ(sequence_length('a'), 1u);
  EXPECT_EQ(sequence_length(0x80), 1u);  // stray continuation byte
  EXPECT_EQ(sequence_length(0xC3), 2u);
  EXPECT_EQ(sequence_length(0xE2), 3u);
  EXPECT_EQ(sequence_length(0xF0), 4u);
}

TEST(Utf8, AppendEncodesEveryLength) {
  std::string s;
  for (uint32_t cp : {0x41u, 0xE9u, 0x20ACu, 0x1F600u}) append(s, cp);
  EXPECT_EQ(s, "A\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80");
}

// Each length ends exactly below its next power: U+07FF is the last two-byte code
// point, U+0800 the first three-byte one.
TEST(Utf8, AppendSwitchesLengthAtTheBoundaries) {
  auto enc = [](uint32_t cp) {
    std::string s;
    append(s, cp);
    return s;
  };
  EXPECT_EQ(enc(0x7F), "\x7F");
  EXPECT_EQ(enc(0x80), "\xC2\x80");
  EXPECT_EQ(enc(0x7FF), "\xDF\xBF");
  EXPECT_EQ(enc(0x800), "\xE0\xA0\x80");
  EXPECT_EQ(enc(0xFFFF), "\xEF\xBF\xBF");
  EXPECT_EQ(enc(0x10000), "\xF0\x90\x80\x80");
}

TEST(Utf8, LenientDecodeReplacesEachBadByte) {
  EXPECT_EQ(decode_lenient("a\xC3\xA9"), (std::vector<uint32_t>{'a', 0xE9}));
  // A lead byte without its continuation: one U+FFFD, then decoding resumes.
  EXPECT_EQ(decode_lenient("\xC3" "a"), (std::vector<uint32_t>{kReplacement, 'a'}));
  EXPECT_EQ(decode_lenient("\xFF\x80"), (std::vector<uint32_t>{kReplacement, kReplacement}));
  // Surrogates cannot be re-encoded as UTF-8.
  EXPECT_EQ(decode_lenient("\xED\xA0\x80"), (std::vector<uint32_t>{kReplacement}));
  EXPECT_EQ(encode(decode_lenient("h\xC3llo")), "h" + kFffd + "llo");
}

TEST(Utf8, ValidSequenceLengthDistinguishesIncompleteFromInvalid) {
  EXPECT_EQ(valid_sequence_length("a"), 1);
  EXPECT_EQ(valid_sequence_length("\xE2\x82\xAC"), 3);
  EXPECT_EQ(valid_sequence_length("\xE2\x82"), 0);    // may still be completed
  EXPECT_EQ(valid_sequence_length("\xE2\x41"), -1);   // cannot be
  EXPECT_EQ(valid_sequence_length("\xC0\x80"), -1);   // overlong
  EXPECT_EQ(valid_sequence_length("\xED\xA0"), -1);   // surrogate range
  EXPECT_EQ(valid_sequence_length("\xF4\x90"), -1);   // above U+10FFFF
  EXPECT_EQ(valid_sequence_length("\x80"), -1);
}

TEST(Utf8, DrainKeepsOnlyAnIncompleteTail) {
  std::string pending = "ab\xF0\x9F\x98";
  std::string out;
  drain_complete(pending, out);
  EXPECT_EQ(out, "ab");
  EXPECT_EQ(pending, "\xF0\x9F\x98");
  pending += "\x80";
  drain_complete(pending, out);
  EXPECT_EQ(out, "ab\xF0\x9F\x98\x80");
  EXPECT_TRUE(pending.empty());
}

TEST(Utf8, SanitizeReplacesIllFormedParts) {
  EXPECT_EQ(sanitize("ok"), "ok");
  EXPECT_EQ(sanitize("\xE2\x82" "A"), kFffd + "A");  // one U+FFFD for the maximal subpart
  EXPECT_EQ(sanitize("x\xF0\x9F"), "x" + kFffd);     // incomplete tail
  EXPECT_EQ(sanitize("\xFF\xFE"), kFffd + kFffd);
  EXPECT_TRUE(is_valid(sanitize("\xC0\xAF\xED\xA0\x80\xF4\x90\x80\x80z")));
  EXPECT_FALSE(is_valid("\xC0\xAF"));
}

}  // namespace
}  // namespace seer::utf8
