#include "server/tool_formats/python_literal.h"

#include <cctype>
#include <cstring>
#include <string>

#include "server/tool_formats/call_text.h"

namespace seer::server {
namespace {

using nlohmann::ordered_json;

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// `digits` hex digits at s[i]; -1 when not hex, -2 when the text ends first.
long hex_at(std::string_view s, size_t i, size_t digits) {
  if (i + digits > s.size()) return -2;
  long v = 0;
  for (size_t k = 0; k < digits; ++k) {
    const char c = s[i + k];
    if (!std::isxdigit(static_cast<unsigned char>(c))) return -1;
    v = v * 16 + (std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(c) - 'a' + 10));
  }
  return v;
}

PyRead read_string(std::string_view s, size_t* i, ordered_json* out) {
  const char quote = s[*i];
  std::string text;
  for (size_t k = *i + 1; k < s.size(); ++k) {
    const char c = s[k];
    if (c == quote) {
      *out = text;
      *i = k + 1;
      return PyRead::Done;
    }
    if (c != '\\') {
      text += c;
      continue;
    }
    if (++k >= s.size()) return PyRead::NotYet;
    const char e = s[k];
    static constexpr std::string_view kFrom = "nrtbf0\\'\"/", kTo = "\n\r\t\b\f\0\\'\"/";
    if (size_t at = kFrom.find(e); at != std::string_view::npos) {
      text += kTo[at];
    } else if (e == 'x' || e == 'u' || e == 'U') {
      const size_t n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
      long cp = hex_at(s, k + 1, n);
      if (cp == -2) return PyRead::NotYet;
      if (cp < 0 || cp > 0x10FFFF) return PyRead::Bad;
      k += n;
      if (cp >= 0xD800 && cp < 0xDC00 && e == 'u') {  // a JSON-style surrogate pair: \uD83D\uDE00
        if (k + 6 >= s.size()) return PyRead::NotYet;
        const long low = s.substr(k + 1, 2) == "\\u" ? hex_at(s, k + 3, 4) : -1;
        if (low < 0xDC00 || low >= 0xE000) return PyRead::Bad;
        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        k += 6;
      }
      if (cp >= 0xD800 && cp < 0xE000) return PyRead::Bad;  // a lone surrogate
      append_utf8(text, static_cast<uint32_t>(cp));
    } else {
      text += '\\';  // Python keeps an unknown escape as written
      text += e;
    }
  }
  return PyRead::NotYet;
}

PyRead read_number_or_name(std::string_view s, size_t* i, ordered_json* out) {
  size_t k = *i;
  while (k < s.size() && (std::isalnum(static_cast<unsigned char>(s[k])) || std::strchr("+-._", s[k]))) ++k;
  if (k >= s.size()) return PyRead::NotYet;
  const std::string word(s.substr(*i, k - *i));
  *i = k;
  if (word == "True" || word == "true") return *out = true, PyRead::Done;
  if (word == "False" || word == "false") return *out = false, PyRead::Done;
  if (word == "None" || word == "null") return *out = nullptr, PyRead::Done;
  ordered_json n = ordered_json::parse(word, nullptr, false);
  if (n.is_discarded() || !n.is_number()) return PyRead::Bad;
  *out = n;
  return PyRead::Done;
}

PyRead read_container(std::string_view s, size_t* i, ordered_json* out, int depth) {
  const char open = s[*i], close = open == '[' ? ']' : open == '(' ? ')' : '}';
  *out = open == '{' ? ordered_json::object() : ordered_json::array();
  size_t k = *i + 1;
  for (;;) {
    k = skip_space(s, k);
    if (k >= s.size()) return PyRead::NotYet;
    if (s[k] == close) break;
    ordered_json item;
    if (PyRead r = read_python_literal(s, &k, &item, depth - 1); r != PyRead::Done) return r;
    if (open == '{') {
      k = skip_space(s, k);
      if (k >= s.size()) return PyRead::NotYet;
      if (s[k] != ':') return PyRead::Bad;
      ++k;
      ordered_json value;
      if (PyRead r = read_python_literal(s, &k, &value, depth - 1); r != PyRead::Done) return r;
      (*out)[item.is_string() ? item.get<std::string>() : item.dump()] = value;
    } else {
      out->push_back(item);
    }
    k = skip_space(s, k);
    if (k >= s.size()) return PyRead::NotYet;
    if (s[k] == ',') ++k;
    else if (s[k] != close) return PyRead::Bad;
  }
  *i = k + 1;
  return PyRead::Done;
}

}  // namespace

PyRead read_python_literal(std::string_view s, size_t* i, ordered_json* out, int max_depth) {
  *i = skip_space(s, *i);
  if (*i >= s.size()) return PyRead::NotYet;
  const char c = s[*i];
  if (c == '"' || c == '\'') return read_string(s, i, out);
  if (c == '[' || c == '(' || c == '{') return max_depth <= 0 ? PyRead::Bad : read_container(s, i, out, max_depth);
  if (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '+' || c == '.') return read_number_or_name(s, i, out);
  return PyRead::Bad;
}

}  // namespace seer::server
