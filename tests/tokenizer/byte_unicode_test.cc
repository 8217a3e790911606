#include <gtest/gtest.h>

#include <set>

#include "tokenizer/byte_unicode.h"

namespace seer::byte_unicode {
namespace {

TEST(ByteUnicode, PrintableBytesMapToThemselves) {
  EXPECT_EQ(byte_to_codepoint('A'), uint32_t{'A'});
  EXPECT_EQ(byte_to_codepoint('~'), uint32_t{'~'});
  EXPECT_EQ(byte_to_codepoint(0xE9), 0xE9u);
}

TEST(ByteUnicode, OtherBytesFollowGpt2Order) {
  EXPECT_EQ(byte_to_codepoint(0x00), 0x100u);
  EXPECT_EQ(byte_to_codepoint(' '), 0x120u);   // "Ġ"
  EXPECT_EQ(byte_to_codepoint('\n'), 0x10Au);  // "Ċ"
  EXPECT_EQ(byte_to_codepoint(0xAD), 0x143u);  // the last one
  EXPECT_EQ(encode(" hi\n"), "\xC4\xA0hi\xC4\x8A");
}

TEST(ByteUnicode, MappingIsABijection) {
  std::set<uint32_t> seen;
  for (int b = 0; b < 256; ++b) {
    const uint32_t cp = byte_to_codepoint(static_cast<uint8_t>(b));
    EXPECT_TRUE(seen.insert(cp).second) << b;
    EXPECT_EQ(codepoint_to_byte(cp), b);
  }
  EXPECT_EQ(codepoint_to_byte(0x2581), -1);
}

TEST(ByteUnicode, DecodeInvertsEncodeForAnyBytes) {
  std::string all;
  for (int b = 0; b < 256; ++b) all.push_back(static_cast<char>(b));
  EXPECT_EQ(decode(encode(all)), all);
}

}  // namespace
}  // namespace seer::byte_unicode
