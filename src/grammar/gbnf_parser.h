#pragma once
// GBNF, llama.cpp's grammar format: `name ::= alternatives` rules; sequences of
// "literals", [character classes] (ranges a-z, negation [^...]), `.` (any character),
// rule names and (groups); postfix *, +, ?, {m}, {m,}, {m,n}; `|` between
// alternatives; # comments. Escapes in literals and classes: \n \r \t \\ \" \' \[ \]
// \- \^ \xHH \uHHHH \UHHHHHHHH. A rule ends at the end of its line unless a group is
// open or the next line starts with `|`. The start symbol is `root`.
#include <string_view>

#include "grammar/grammar.h"

namespace seer::grammar {

// Throws seer::Error with the line and column of the first problem, including a text
// past the limits below or grammar.h's kMaxRuleChain and kMaxGrammarElements.
[[nodiscard]] Grammar parse_gbnf(std::string_view text, const std::string& root = "root");

// Repetition bound accepted in {m,n} (a larger bound is almost surely a mistake and
// would blow the grammar up).
constexpr int kMaxRepetition = 10000;

// Groups ( ) nested in groups: the parser reads one by recursion (docs/security.md).
constexpr int kMaxGroupNesting = 64;

}  // namespace seer::grammar
