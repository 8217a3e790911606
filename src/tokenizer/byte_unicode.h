#pragma once
// GPT-2's reversible byte <-> Unicode mapping used by byte-level BPE vocabularies:
// printable bytes map to themselves, the other 68 to U+0100.. in byte order, so that
// every vocabulary string is printable text (a space is "Ġ", a newline "Ċ").
#include <cstdint>
#include <string>
#include <string_view>

namespace seer::byte_unicode {

// The code point a byte is written as.
uint32_t byte_to_codepoint(uint8_t b);
// The byte a code point stands for, or -1 when it is not part of the mapping.
int codepoint_to_byte(uint32_t cp);

// Maps every byte of `bytes` to its code point, UTF-8 encoded.
std::string encode(std::string_view bytes);
// Inverse of encode. Characters outside the mapping are kept as their UTF-8 bytes.
std::string decode(std::string_view text);

}  // namespace seer::byte_unicode
