#pragma once
// Splits a template into tokens: literal text, and the contents of {{ }} and {% %}
// tags. Comments ({# #}) vanish. Whitespace control is settled here, as Hugging Face
// renders chat templates: trim_blocks (the first newline after a block or comment tag
// is dropped), lstrip_blocks (spaces and tabs before a block or comment tag at the
// start of a line are dropped; "{%+" keeps them), "-" on either side of a tag strips
// all whitespace on that side, and one trailing newline of the template is dropped.
#include <string>
#include <vector>

namespace seer::tmpl {

struct Pos {
  int line = 1;
  int column = 1;
};

enum class Tok {
  Text,        // literal template text (value)
  VarBegin,    // {{
  VarEnd,      // }}
  BlockBegin,  // {%
  BlockEnd,    // %}
  Name,        // identifiers and keywords
  String,      // value holds the unescaped text
  Int,
  Float,
  Op,          // + - * / // % ** ~ == != < <= > >= = ( ) [ ] { } , . : |
  End,
};

struct Token {
  Tok kind;
  std::string value;
  Pos pos;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
};

// Throws seer::Error ("line L, column C: ...") for unterminated tags, strings or
// characters that cannot start a token.
[[nodiscard]] std::vector<Token> lex(const std::string& source, const LexOptions& options = {});

}  // namespace seer::tmpl
