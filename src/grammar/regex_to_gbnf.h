#pragma once
// JSON Schema `pattern` (ECMAScript regular expressions) to GBNF over the characters of
// a JSON string, as written between its quotes. The subset a grammar can express:
// literals, `.`, classes `[...]` `[^...]` with ranges and \d \w \s (and negations),
// escapes (\n \r \t \f \v \0 \xHH \uHHHH \u{H...} \cX and escaped syntax characters),
// groups `( )`, `(?: )`, `(?<name> )`, alternation, quantifiers * + ? {n} {n,} {n,m}
// (lazy forms too: they match the same strings), and anchors ^ $ at the ends of a
// top-level alternative. As in ECMAScript a pattern matches anywhere in the string
// unless anchored. Back-references, look-arounds, word boundaries and anchors inside
// groups are refused.
#include <string>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

// Quantifier bounds and pattern length accepted (refused past them, naming the limit).
constexpr uint64_t kMaxRegexRepeat = 100000;
constexpr size_t kMaxPatternBytes = 4096;

// The expression for the string content; throws seer::Error "'pattern' ...: <problem>".
std::string regex_to_gbnf(RuleSet& rules, const std::string& pattern);

}  // namespace seer::grammar
