#include "grammar/gbnf_parser.h"

#include <algorithm>

#include "common/error.h"

namespace seer::grammar {
namespace {

using Sequence = GrammarBuilder::Sequence;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  explicit Parser(std::string_view text) : s_(text) {}

  Grammar parse(const std::string& root) {
    skip_blank_lines();
    while (pos_ < s_.size()) {
      std::string name = parse_name();
      skip_inline_space();
      if (s_.substr(pos_, 3) != "::=") error("expected '::=' after rule name '{}'", name);
      pos_ += 3;
      const uint32_t id = b_.rule_id(name);
      if (b_.defined(id)) error("rule '{}' is defined twice", name);
      std::vector<Sequence> alts = parse_alternatives(/*nested=*/false);
      define(id, alts);
      skip_blank_lines();
    }
    return b_.finish(root);
  }

 private:
  template <typename... Args>
  [[noreturn]] void error(fmt::format_string<Args...> f, Args&&... args) const {
    size_t line = 1, col = 1;
    for (size_t i = 0; i < pos_ && i < s_.size(); ++i) {
      if (s_[i] == '\n') ++line, col = 1;
      else ++col;
    }
    fail("grammar: line {}, column {}: {}", line, col, fmt::format(f, std::forward<Args>(args)...));
  }

  // GrammarBuilder::define, refusing at this position what would pass the size limit.
  void define(uint32_t rule, const std::vector<Sequence>& alternatives) {
    size_t added = 0;
    for (const Sequence& alt : alternatives) added += alt.size() + 1;
    if (b_.elements() + added > kMaxGrammarElements)
      error("the grammar has more than {} elements (the GBNF size limit)", kMaxGrammarElements);
    b_.define(rule, alternatives);
  }

  bool at_end() const { return pos_ >= s_.size(); }
  char peek() const { return at_end() ? '\0' : s_[pos_]; }

  void skip_comment() {
    while (!at_end() && s_[pos_] != '\n') ++pos_;
  }
  void skip_inline_space() {
    while (!at_end()) {
      char c = s_[pos_];
      if (c == ' ' || c == '\t' || c == '\r') ++pos_;
      else if (c == '#') skip_comment();
      else break;
    }
  }
  void skip_blank_lines() {
    while (!at_end()) {
      skip_inline_space();
      if (peek() == '\n') ++pos_;
      else break;
    }
  }
  // Inside a group newlines are space; at top level a newline ends the rule unless
  // the next non-blank line continues it with '|'.
  void skip_space(bool nested) {
    if (nested) return skip_blank_lines();
    skip_inline_space();
    if (peek() != '\n') return;
    size_t save = pos_;
    skip_blank_lines();
    if (peek() != '|') pos_ = save;
  }

  std::string parse_name() {
    size_t start = pos_;
    while (!at_end() && is_name_char(s_[pos_])) ++pos_;
    if (pos_ == start) error("expected a rule name");
    return std::string(s_.substr(start, pos_ - start));
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int i = 0; i < digits; ++i) {
      char c = peek();
      int d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
      if (d < 0) error("expected {} hex digits", digits);
      v = v * 16 + static_cast<uint32_t>(d);
      ++pos_;
    }
    if (v > 0x10FFFF) error("code point U+{:X} is beyond Unicode", v);
    return v;
  }

  // One code point of a literal or class, decoding UTF-8 and escapes.
  uint32_t parse_char() {
    if (at_end()) error("unexpected end of grammar");
    unsigned char c = static_cast<unsigned char>(s_[pos_]);
    if (c == '\\') {
      ++pos_;
      char e = peek();
      ++pos_;
      switch (e) {
        case 'n': return '\n';
        case 'r': return '\r';
        case 't': return '\t';
        case '0': return 0;
        case '\\': case '"': case '\'': case '[': case ']': case '-': case '^': case '/': return static_cast<uint32_t>(e);
        case 'x': return parse_hex(2);
        case 'u': return parse_hex(4);
        case 'U': return parse_hex(8);
        default: --pos_; error("unknown escape '\\{}'", e);
      }
    }
    int len = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (len == 0 || pos_ + len > s_.size()) error("invalid UTF-8 in grammar");
    uint32_t cp = len == 1 ? c : c & (0x7F >> len);
    for (int i = 1; i < len; ++i) {
      unsigned char k = static_cast<unsigned char>(s_[pos_ + i]);
      if ((k & 0xC0) != 0x80) error("invalid UTF-8 in grammar");
      cp = (cp << 6) | (k & 0x3F);
    }
    pos_ += len;
    return cp;
  }

  Sequence parse_literal() {
    ++pos_;  // opening quote
    Sequence seq;
    while (peek() != '"') {
      if (at_end() || peek() == '\n') error("unterminated string literal");
      uint32_t cp = parse_char();
      seq.push_back({ElementKind::Chars, b_.add_class(CharClass{{{cp, cp}}, false})});
    }
    ++pos_;
    return seq;
  }

  Element parse_class() {
    ++pos_;  // '['
    CharClass c;
    if (peek() == '^') {
      c.negated = true;
      ++pos_;
    }
    while (peek() != ']') {
      if (at_end()) error("unterminated character class");
      uint32_t lo = parse_char(), hi = lo;
      if (peek() == '-' && pos_ + 1 < s_.size() && s_[pos_ + 1] != ']') {
        ++pos_;
        hi = parse_char();
        if (hi < lo) error("range end U+{:X} is below its start U+{:X}", hi, lo);
      }
      c.ranges.push_back({lo, hi});
    }
    ++pos_;
    return {ElementKind::Chars, b_.add_class(std::move(c))};
  }

  int parse_int() {
    size_t start = pos_;
    long v = 0;
    while (!at_end() && s_[pos_] >= '0' && s_[pos_] <= '9') {
      v = v * 10 + (s_[pos_++] - '0');
      if (v > kMaxRepetition) error("repetition bound above {}", kMaxRepetition);
    }
    if (pos_ == start) error("expected a number");
    return static_cast<int>(v);
  }

  // X{min,max} (max < 0: unbounded) as new rules, appended to `out`.
  void repeat(const Sequence& item, int min, int max, Sequence& out) {
    const size_t copies = static_cast<size_t>(std::max(min, max)) * item.size();
    if (b_.elements() + out.size() + copies > kMaxGrammarElements)
      error("the repetition makes the grammar more than {} elements (the GBNF size limit)", kMaxGrammarElements);
    for (int i = 0; i < min; ++i) out.insert(out.end(), item.begin(), item.end());
    if (max == min) return;
    if (max < 0) {  // star ::= item star | ""
      uint32_t star = b_.fresh_rule("star");
      Sequence rec = item;
      rec.push_back({ElementKind::RuleRef, star});
      define(star, {rec, {}});
      out.push_back({ElementKind::RuleRef, star});
      return;
    }
    // opt_k ::= item opt_{k-1} | "" for the max - min optional copies.
    uint32_t prev = 0;
    bool have_prev = false;
    for (int i = 0; i < max - min; ++i) {
      uint32_t opt = b_.fresh_rule("opt");
      Sequence alt = item;
      if (have_prev) alt.push_back({ElementKind::RuleRef, prev});
      define(opt, {alt, {}});
      prev = opt;
      have_prev = true;
    }
    out.push_back({ElementKind::RuleRef, prev});
  }

  Sequence parse_sequence(bool nested) {
    Sequence seq;
    Sequence last;  // the most recent item, for a postfix operator
    size_t last_start = 0;
    while (!at_end()) {
      char c = peek();
      if (c == '"') {
        last_start = seq.size();
        last = parse_literal();
        seq.insert(seq.end(), last.begin(), last.end());
      } else if (c == '[') {
        last_start = seq.size();
        last = {parse_class()};
        seq.push_back(last[0]);
      } else if (c == '.') {
        ++pos_;
        last_start = seq.size();
        last = {{ElementKind::Chars, b_.add_class(CharClass{{}, true})}};
        seq.push_back(last[0]);
      } else if (is_name_char(c)) {
        size_t save = pos_;
        std::string name = parse_name();
        skip_inline_space();
        if (!nested && s_.substr(pos_, 3) == "::=") {  // the next rule begins: this one ended
          pos_ = save;
          return seq;
        }
        pos_ = save + name.size();
        last_start = seq.size();
        last = {{ElementKind::RuleRef, b_.rule_id(name)}};
        seq.push_back(last[0]);
      } else if (c == '(') {
        if (nesting_ == kMaxGroupNesting) error("groups nest deeper than {} levels (the GBNF nesting limit)", kMaxGroupNesting);
        ++pos_;
        uint32_t group = b_.fresh_rule("group");
        ++nesting_;
        define(group, parse_alternatives(/*nested=*/true));
        --nesting_;
        if (peek() != ')') error("expected ')'");
        ++pos_;
        last_start = seq.size();
        last = {{ElementKind::RuleRef, group}};
        seq.push_back(last[0]);
      } else if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (last.empty()) error("'{}' follows nothing it could repeat", c);
        ++pos_;
        int min = 0, max = -1;
        if (c == '+') min = 1;
        if (c == '?') max = 1;
        if (c == '{') {
          skip_inline_space();
          min = parse_int();
          skip_inline_space();
          max = min;
          if (peek() == ',') {
            ++pos_;
            skip_inline_space();
            max = peek() == '}' ? -1 : parse_int();
            skip_inline_space();
          }
          if (peek() != '}') error("expected '}}'");
          ++pos_;
          if (max >= 0 && max < min) error("repetition {{{},{}}} has max below min", min, max);
        }
        seq.resize(last_start);
        repeat(last, min, max, seq);
        last.clear();
      } else {
        break;
      }
      skip_space(nested);
    }
    return seq;
  }

  std::vector<Sequence> parse_alternatives(bool nested) {
    std::vector<Sequence> alts;
    skip_space(true);
    alts.push_back(parse_sequence(nested));
    while (peek() == '|') {
      ++pos_;
      skip_space(true);
      alts.push_back(parse_sequence(nested));
    }
    if (!nested && !at_end() && peek() != '\n' && !is_name_char(peek())) error("unexpected '{}'", peek());
    return alts;
  }

  std::string_view s_;
  size_t pos_ = 0;
  int nesting_ = 0;  // groups open around pos_
  GrammarBuilder b_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text, const std::string& root) { return Parser(text).parse(root); }

}  // namespace seer::grammar
