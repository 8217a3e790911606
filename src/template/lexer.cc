#include "template/lexer.h"

#include <cctype>

#include "common/error.h"

namespace seer::tmpl {

namespace {

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

class Lexer {
 public:
  Lexer(const std::string& src, const LexOptions& o) : src_(src), opt_(o) {}

  std::vector<Token> run() {
    size_t end = src_.size();
    if (end > 0 && src_[end - 1] == '\n') --end;  // keep_trailing_newline=False
    end_ = end;
    bool strip_next_text = false;  // the previous tag ended with "-"
    bool trim_newline = false;     // the previous tag was a block/comment (trim_blocks)
    bool line_start = true;
    while (i_ < end_) {
      size_t open = find_open(i_);
      std::string text = src_.substr(i_, open - i_);
      Pos text_pos = pos_;
      size_t consumed = text.size();
      if (strip_next_text) {
        size_t k = 0;
        while (k < text.size() && is_space(text[k])) ++k;
        text.erase(0, k);
      } else if (trim_newline && !text.empty() && text[0] == '\n') {
        text.erase(0, 1);
      } else if (trim_newline && text.size() >= 2 && text[0] == '\r' && text[1] == '\n') {
        text.erase(0, 2);
      }
      if (open < end_) {
        const char kind = src_[open + 1];
        const char mod = open + 2 < end_ ? src_[open + 2] : '\0';
        if (mod == '-') {
          while (!text.empty() && is_space(text.back())) text.pop_back();
        } else if (opt_.lstrip_blocks && kind != '{' && mod != '+') {
          size_t nl = text.rfind('\n');
          size_t from = nl == std::string::npos ? 0 : nl + 1;
          bool at_line_start = nl != std::string::npos || line_start;
          if (at_line_start && text.find_first_not_of(" \t", from) == std::string::npos) text.erase(from);
        }
      }
      if (!text.empty()) out_.push_back({Tok::Text, text, text_pos});
      advance(consumed);
      if (open >= end_) break;
      const char kind = src_[open + 1];
      bool right_strip = false;
      if (kind == '#') {
        right_strip = lex_comment();
      } else {
        right_strip = lex_tag(kind);
      }
      strip_next_text = right_strip;
      trim_newline = opt_.trim_blocks && kind != '{';
      line_start = i_ > 0 && src_[i_ - 1] == '\n';
      if (trim_newline && !right_strip && i_ < end_ && src_[i_] == '\n') line_start = true;
    }
    out_.push_back({Tok::End, "", pos_});
    return std::move(out_);
  }

 private:
  [[noreturn]] void error(Pos p, const std::string& msg) {
    fail("chat template line {}, column {}: {}", p.line, p.column, msg);
  }

  size_t find_open(size_t from) const {
    for (size_t k = from; k + 1 < end_; ++k)
      if (src_[k] == '{' && (src_[k + 1] == '{' || src_[k + 1] == '%' || src_[k + 1] == '#')) return k;
    return end_;
  }

  void advance(size_t n) {
    for (size_t k = 0; k < n && i_ < src_.size(); ++k, ++i_) {
      if (src_[i_] == '\n') {
        ++pos_.line;
        pos_.column = 1;
      } else {
        ++pos_.column;
      }
    }
  }

  bool lex_comment() {
    Pos start = pos_;
    size_t close = src_.find("#}", i_ + 2);
    if (close == std::string::npos || close >= end_) error(start, "unterminated comment");
    bool strip = close > i_ + 2 && src_[close - 1] == '-';
    advance(close + 2 - i_);
    return strip;
  }

  // Lexes "{{ ... }}" or "{% ... %}"; returns whether it ended with "-".
  bool lex_tag(char kind) {
    const bool var = kind == '{';
    out_.push_back({var ? Tok::VarBegin : Tok::BlockBegin, "", pos_});
    advance(2);
    if (i_ < end_ && (src_[i_] == '-' || src_[i_] == '+')) advance(1);
    const char close = var ? '}' : '%';
    int depth = 0;  // brackets inside {{ }} may hold "}" of a dict literal
    while (true) {
      while (i_ < end_ && is_space(src_[i_])) advance(1);
      if (i_ >= end_) error(out_.back().pos, var ? "unterminated '{{'" : "unterminated '{%'");
      const char c = src_[i_];
      if (c == '-' && i_ + 2 < src_.size() && src_[i_ + 1] == close && src_[i_ + 2] == '}' && depth == 0) {
        out_.push_back({var ? Tok::VarEnd : Tok::BlockEnd, "", pos_});
        advance(3);
        return true;
      }
      if (c == close && i_ + 1 < src_.size() && src_[i_ + 1] == '}' && depth == 0) {
        out_.push_back({var ? Tok::VarEnd : Tok::BlockEnd, "", pos_});
        advance(2);
        return false;
      }
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      lex_token();
    }
  }

  void lex_token() {
    Pos p = pos_;
    const char c = src_[i_];
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t k = i_;
      while (k < end_ && (std::isalnum(static_cast<unsigned char>(src_[k])) || src_[k] == '_')) ++k;
      out_.push_back({Tok::Name, src_.substr(i_, k - i_), p});
      advance(k - i_);
      return;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t k = i_;
      while (k < end_ && (std::isdigit(static_cast<unsigned char>(src_[k])) || src_[k] == '_')) ++k;
      bool is_float = false;
      if (k + 1 < end_ && src_[k] == '.' && std::isdigit(static_cast<unsigned char>(src_[k + 1]))) {
        is_float = true;
        ++k;
        while (k < end_ && std::isdigit(static_cast<unsigned char>(src_[k]))) ++k;
      }
      if (k < end_ && (src_[k] == 'e' || src_[k] == 'E')) {
        size_t e = k + 1;
        if (e < end_ && (src_[e] == '+' || src_[e] == '-')) ++e;
        if (e < end_ && std::isdigit(static_cast<unsigned char>(src_[e]))) {
          is_float = true;
          k = e;
          while (k < end_ && std::isdigit(static_cast<unsigned char>(src_[k]))) ++k;
        }
      }
      std::string num;
      for (size_t j = i_; j < k; ++j)
        if (src_[j] != '_') num += src_[j];
      out_.push_back({is_float ? Tok::Float : Tok::Int, num, p});
      advance(k - i_);
      return;
    }
    if (c == '\'' || c == '"') {
      out_.push_back({Tok::String, lex_string(c), p});
      return;
    }
    static const char* two[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : two)
      if (src_.compare(i_, 2, op) == 0) {
        out_.push_back({Tok::Op, op, p});
        advance(2);
        return;
      }
    if (std::string("+-*/%~<>=()[]{},.:|").find(c) != std::string::npos) {
      out_.push_back({Tok::Op, std::string(1, c), p});
      advance(1);
      return;
    }
    error(p, std::string("unexpected character '") + c + "'");
  }

  std::string lex_string(char q) {
    Pos start = pos_;
    advance(1);
    std::string out;
    while (true) {
      if (i_ >= end_) error(start, "unterminated string");
      char c = src_[i_];
      if (c == q) {
        advance(1);
        return out;
      }
      if (c == '\\' && i_ + 1 < end_) {
        char e = src_[i_ + 1];
        switch (e) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case '\\': out += '\\'; break;
          case '\'': out += '\''; break;
          case '"': out += '"'; break;
          case '0': out += '\0'; break;
          default: out += '\\', out += e; break;
        }
        advance(2);
        continue;
      }
      out += c;
      advance(1);
    }
  }

  const std::string& src_;
  LexOptions opt_;
  size_t i_ = 0;
  size_t end_ = 0;
  Pos pos_;
  std::vector<Token> out_;
};

}  // namespace

std::vector<Token> lex(const std::string& source, const LexOptions& options) { return Lexer(source, options).run(); }

}  // namespace seer::tmpl
