#include "tokenizer/utf8.h"

namespace seer::utf8 {

size_t sequence_length(unsigned char lead) {
  static constexpr size_t kByHighNibble[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kByHighNibble[lead >> 4];
}

void append(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out.push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out.push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out.push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out.push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

namespace {

bool is_continuation(unsigned char c) { return (c & 0xC0) == 0x80; }

}  // namespace

std::vector<uint32_t> decode_lenient(std::string_view text) {
  std::vector<uint32_t> cps;
  cps.reserve(text.size());
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  const size_t n = text.size();
  size_t i = 0;
  while (i < n) {
    const unsigned char c = s[i];
    size_t len = 0;
    uint32_t cp = 0;
    if (c < 0x80) {
      len = 1;
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      len = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4;
      cp = c & 0x07;
    }
    bool ok = len > 0 && i + len <= n;
    for (size_t k = 1; ok && k < len; ++k) {
      if (!is_continuation(s[i + k])) ok = false;
      cp = (cp << 6) | (s[i + k] & 0x3F);
    }
    if (!ok) {
      cps.push_back(kReplacement);
      i += 1;
      continue;
    }
    if ((cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF) cp = kReplacement;
    cps.push_back(cp);
    i += len;
  }
  return cps;
}

std::string encode(const std::vector<uint32_t>& cps) {
  std::string out;
  out.reserve(cps.size());
  for (uint32_t cp : cps) append(out, cp);
  return out;
}

int valid_sequence_length(std::string_view str) {
  if (str.empty()) return 0;
  const auto* s = reinterpret_cast<const unsigned char*>(str.data());
  const unsigned char c = s[0];
  if (c < 0x80) return 1;
  int len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte (RFC 3629 table)
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return -1;
  }
  for (int k = 1; k < len; ++k) {
    if (static_cast<size_t>(k) >= str.size()) return 0;  // so far valid, incomplete
    const unsigned char b = s[k];
    if (k == 1 ? (b < lo || b > hi) : !is_continuation(b)) return -1;
  }
  return len;
}

namespace {

// Consumes one ill-formed subpart starting at `i` (at least one byte): the lead byte
// plus the continuation bytes that were valid for it, so "E2 82 41" gives one
// U+FFFD for "E2 82" and keeps the 'A'.
size_t ill_formed_length(std::string_view s) {
  size_t good = 1;
  while (good < s.size() && good < 4 && valid_sequence_length(s.substr(0, good + 1)) == 0) ++good;
  return good;
}

}  // namespace

void drain_complete(std::string& pending, std::string& out) {
  std::string_view s(pending);
  size_t i = 0;
  while (i < s.size()) {
    const int len = valid_sequence_length(s.substr(i));
    if (len > 0) {
      out.append(s.substr(i, static_cast<size_t>(len)));
      i += static_cast<size_t>(len);
    } else if (len == 0) {
      break;  // incomplete: wait for more bytes
    } else {
      append(out, kReplacement);
      i += ill_formed_length(s.substr(i));
    }
  }
  pending.erase(0, i);
}

std::string sanitize(std::string_view bytes) {
  std::string pending(bytes), out;
  out.reserve(bytes.size());
  drain_complete(pending, out);
  if (!pending.empty()) append(out, kReplacement);
  return out;
}

bool is_valid(std::string_view bytes) {
  size_t i = 0;
  while (i < bytes.size()) {
    const int len = valid_sequence_length(bytes.substr(i));
    if (len <= 0) return false;
    i += static_cast<size_t>(len);
  }
  return true;
}

}  // namespace seer::utf8
