#pragma once
#include <string>
#include <string_view>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"

namespace seer::grammar::testing {

// True when `text` is a complete sentence of `g`.
inline bool matches(const Grammar& g, std::string_view text) {
  StackMachine m(g);
  MatchState s = m.initial();
  return m.accept(s, text) && StackMachine::can_end(s);
}

// True when `text` can be continued into a sentence (a live prefix).
inline bool prefix_ok(const Grammar& g, std::string_view text) {
  StackMachine m(g);
  MatchState s = m.initial();
  return m.accept(s, text);
}

}  // namespace seer::grammar::testing
