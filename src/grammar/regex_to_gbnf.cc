#include "grammar/regex_to_gbnf.h"

#include <fmt/format.h>

#include "common/error.h"
#include "grammar/code_point_set.h"

namespace seer::grammar {
namespace {

const CodePointSet kDigits = {{'0', '9'}};
const CodePointSet kWord = normalized({{'0', '9'}, {'A', 'Z'}, {'_', '_'}, {'a', 'z'}});
const CodePointSet kSpace = normalized({{'\t', '\r'}, {' ', ' '}, {0xA0, 0xA0}, {0x1680, 0x1680}, {0x2000, 0x200A},
                                        {0x2028, 0x2029}, {0x202F, 0x202F}, {0x205F, 0x205F}, {0x3000, 0x3000},
                                        {0xFEFF, 0xFEFF}});
const CodePointSet kLineTerminators = normalized({{'\n', '\n'}, {'\r', '\r'}, {0x2028, 0x2029}});

// A parsed piece: its GBNF expression and whether it can match "".
struct Piece {
  std::string expr;
  bool nullable = false;
};

class RegexCompiler {
 public:
  RegexCompiler(RuleSet& rules, const std::string& pattern) : rules_(rules), s_(pattern) {}

  std::string compile() {
    if (s_.size() > kMaxPatternBytes) error("is longer than {} bytes (the pattern length limit)", kMaxPatternBytes);
    const std::string any = rules_.memo("regex-any", [&] {
      return rules_.rule("any-chars", "( " + json_chars(complement({})) + " )*");
    });
    std::string alts;
    do {
      if (pos_ < s_.size() && s_[pos_] == '|') ++pos_;
      const bool start = eat('^');
      Piece p = sequence(/*top=*/true);
      const bool end = eat('$');
      alts += (alts.empty() ? "" : " | ") + std::string(start ? "" : any + " ") + p.expr + (end ? "" : " " + any);
    } while (pos_ < s_.size() && s_[pos_] == '|');
    if (pos_ != s_.size()) error("has an unexpected '{}' at offset {}", s_[pos_], pos_);
    return rules_.rule("pattern", alts);
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> f, Args&&... args) const {
    fail("'pattern' {}", fmt::format(f, std::forward<Args>(args)...));
  }

  bool eat(char c) {
    if (pos_ < s_.size() && s_[pos_] == c) return ++pos_, true;
    return false;
  }
  bool at(char c) const { return pos_ < s_.size() && s_[pos_] == c; }

  uint32_t next_code_point() {
    const auto c = static_cast<unsigned char>(s_[pos_]);
    const int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || pos_ + len > s_.size()) error("is not valid UTF-8");
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int i = 1; i < len; ++i) cp = (cp << 6) | (static_cast<unsigned char>(s_[pos_ + i]) & 0x3F);
    pos_ += len;
    return cp;
  }

  Piece alternation() {
    Piece out = sequence(false);
    std::string alts = out.expr;
    bool alternated = false;
    while (eat('|')) {
      Piece p = sequence(false);
      alts += " | " + p.expr;
      out.nullable = out.nullable || p.nullable;
      alternated = true;
    }
    out.expr = alternated ? "( " + alts + " )" : out.expr;
    return out;
  }

  // Items up to ')' or '|' (or, at the top level, a final '$').
  Piece sequence(bool top) {
    Piece out{"", true};
    while (pos_ < s_.size() && !at('|') && !at(')')) {
      if (at('$')) {
        if (top && pos_ + 1 == s_.size()) break;
        if (top && s_[pos_ + 1] == '|') break;
        error("uses '$' inside the pattern (only at the end of an alternative)");
      }
      if (at('^')) error("uses '^' inside the pattern (only at the start of an alternative)");
      Piece p = quantified(atom());
      out.expr += (out.expr.empty() ? "" : " ") + p.expr;
      out.nullable = out.nullable && p.nullable;
    }
    if (out.expr.empty()) out.expr = "\"\"";
    return out;
  }

  uint64_t number() {
    const size_t start = pos_;
    uint64_t v = 0;
    while (pos_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_]))) {
      v = v * 10 + static_cast<uint64_t>(s_[pos_++] - '0');
      if (v > kMaxRegexRepeat) error("repeats more than {} times (the pattern repetition limit)", kMaxRegexRepeat);
    }
    if (pos_ == start) error("has a malformed '{{' quantifier");
    return v;
  }

  Piece quantified(Piece p) {
    uint64_t min = 1;
    std::optional<uint64_t> max = 1;
    if (eat('*')) min = 0, max.reset();
    else if (eat('+')) max.reset();
    else if (eat('?')) min = 0;
    else if (at('{') && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1]))) {
      ++pos_;
      min = number();
      max = min;
      if (eat(',')) max = at('}') ? std::nullopt : std::optional<uint64_t>(number());
      if (!eat('}')) error("has a malformed '{{' quantifier");
      if (max && *max < min) error("has a quantifier {{{},{}}} with max below min", min, *max);
    } else {
      return p;
    }
    eat('?');  // lazy: the same strings
    if (!max && p.nullable) error("repeats without bound a part that can match the empty string");
    const std::string item = rules_.rule("re-item", p.expr);
    return {counted(rules_, item, min, max), p.nullable || min == 0};
  }

  Piece atom() {
    if (eat('(')) {
      if (eat('?')) {
        if (eat('=') || eat('!')) error("uses a look-ahead, which a grammar cannot express");
        if (eat('<')) {
          if (eat('=') || eat('!')) error("uses a look-behind, which a grammar cannot express");
          while (pos_ < s_.size() && s_[pos_] != '>') ++pos_;
          if (!eat('>')) error("has an unterminated group name");
        } else if (!eat(':')) {
          error("has an unsupported group '(?{}'", pos_ < s_.size() ? s_[pos_] : ' ');
        }
      }
      if (++depth_ > 32) error("nests groups deeper than 32 levels (the pattern nesting limit)");
      Piece p = alternation();
      --depth_;
      if (!eat(')')) error("has an unclosed group");
      return {rules_.rule("re-group", p.expr), p.nullable};
    }
    if (eat('[')) return {chars(char_class()), false};
    if (eat('.')) return {chars(complement(kLineTerminators)), false};
    if (at('*') || at('+') || at('?')) error("has a quantifier '{}' that follows nothing", s_[pos_]);
    if (at('{') && pos_ + 1 < s_.size() && std::isdigit(static_cast<unsigned char>(s_[pos_ + 1])))
      error("has a quantifier '{{' that follows nothing");
    if (eat('\\')) {
      CodePointSet set = escape(/*in_class=*/false);
      return {chars(set), false};
    }
    const uint32_t cp = next_code_point();
    return {chars({{cp, cp}}), false};
  }

  std::string chars(const CodePointSet& set) {
    std::string e = json_chars(set);
    if (e.empty()) return "[^\\x00-\\U0010FFFF]";  // an empty class matches nothing
    return e;
  }

  uint32_t hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      if (pos_ >= s_.size() || !std::isxdigit(static_cast<unsigned char>(s_[pos_]))) error("has a malformed hex escape");
      const char c = static_cast<char>(std::tolower(static_cast<unsigned char>(s_[pos_++])));
      v = v * 16 + static_cast<uint32_t>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : c - 'a' + 10);
    }
    return v;
  }

  CodePointSet one(uint32_t cp) { return {{cp, cp}}; }

  // After a backslash.
  CodePointSet escape(bool in_class) {
    if (pos_ >= s_.size()) error("ends with a lone backslash");
    const char e = s_[pos_++];
    switch (e) {
      case 'd': return kDigits;
      case 'D': return complement(kDigits);
      case 'w': return kWord;
      case 'W': return complement(kWord);
      case 's': return kSpace;
      case 'S': return complement(kSpace);
      case 'n': return one('\n');
      case 'r': return one('\r');
      case 't': return one('\t');
      case 'f': return one('\f');
      case 'v': return one('\v');
      case '0': return one(0);
      case 'x': return one(hex(2));
      case 'c':
        if (pos_ < s_.size() && std::isalpha(static_cast<unsigned char>(s_[pos_]))) return one(s_[pos_++] % 32);
        error("has a malformed '\\c' escape");
      case 'u': {
        if (eat('{')) {
          uint32_t v = 0;
          while (!eat('}')) v = v * 16 + hex(1);
          if (v > 0x10FFFF) error("escapes a code point past U+10FFFF");
          return one(v);
        }
        return one(hex(4));
      }
      case 'b':
        if (in_class) return one('\b');
        error("uses '\\b' (a word boundary), which a grammar cannot express");
      case 'B': error("uses '\\B' (a word boundary), which a grammar cannot express");
      case 'k': error("uses a back-reference, which a grammar cannot express");
      default: break;
    }
    if (e >= '1' && e <= '9') error("uses a back-reference, which a grammar cannot express");
    if (std::isalnum(static_cast<unsigned char>(e))) error("has an unknown escape '\\{}'", e);
    --pos_;
    const uint32_t cp = next_code_point();
    return one(cp);
  }

  // After '['.
  CodePointSet char_class() {
    const bool negated = eat('^');
    CodePointSet set;
    while (!eat(']')) {
      if (pos_ >= s_.size()) error("has an unclosed '['");
      CodePointSet lo = class_atom();
      if (at('-') && pos_ + 1 < s_.size() && s_[pos_ + 1] != ']') {
        ++pos_;
        CodePointSet hi = class_atom();
        if (lo.size() != 1 || hi.size() != 1 || lo[0].lo != lo[0].hi || hi[0].lo != hi[0].hi)
          error("has a class range with a class at one end");
        if (hi[0].lo < lo[0].lo) error("has a class range out of order");
        set.push_back({lo[0].lo, hi[0].lo});
      } else {
        set = united(set, lo);
      }
    }
    set = normalized(set);
    return negated ? complement(set) : set;
  }

  CodePointSet class_atom() {
    if (eat('\\')) return escape(/*in_class=*/true);
    const uint32_t cp = next_code_point();
    return one(cp);
  }

  RuleSet& rules_;
  const std::string& s_;
  size_t pos_ = 0;
  int depth_ = 0;
};

}  // namespace

std::string regex_to_gbnf(RuleSet& rules, const std::string& pattern) { return RegexCompiler(rules, pattern).compile(); }

}  // namespace seer::grammar
