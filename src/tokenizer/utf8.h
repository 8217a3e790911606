#pragma once
// UTF-8 helpers shared by the tokenizers and the stream decoder.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace seer::utf8 {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Bytes in the sequence a lead byte announces, as llama.cpp counts them: 1 for ASCII
// and for stray continuation bytes, else 2, 3 or 4 (never more than what remains is
// the caller's business).
size_t sequence_length(unsigned char lead);

// Appends the UTF-8 encoding of `cp` (which must be <= 0x10FFFF and not a surrogate).
void append(std::string& out, uint32_t cp);

// Code points of `text`, decoding the way llama.cpp does before pre-tokenizing: a
// byte that does not start a well-formed sequence becomes one U+FFFD and decoding
// resumes at the next byte. Surrogates and values above U+10FFFF, which llama.cpp
// cannot re-encode, also become U+FFFD so the result always re-encodes to valid UTF-8.
std::vector<uint32_t> decode_lenient(std::string_view text);
std::string encode(const std::vector<uint32_t>& cps);

// Length of the well-formed (RFC 3629) sequence at the start of `s`: 1..4, 0 when
// `s` starts with a valid but incomplete sequence (more bytes could complete it), or
// -1 when the first byte cannot start a sequence here.
int valid_sequence_length(std::string_view s);

// Moves the complete characters at the front of `pending` into `out` (ill-formed
// bytes become U+FFFD, one per maximal ill-formed subpart), leaving in `pending` only
// an incomplete sequence that later bytes may still complete.
void drain_complete(std::string& pending, std::string& out);

// `bytes` with every ill-formed part, including an incomplete tail, replaced by U+FFFD.
std::string sanitize(std::string_view bytes);

bool is_valid(std::string_view bytes);

}  // namespace seer::utf8
