#pragma once
// The pushdown matcher over a Grammar (as llama.cpp's grammar sampler): a state is a
// set of stacks of positions, each stack one way the text so far can continue. A
// stack's top is always a character class (rule references are expanded eagerly), or
// the stack is empty, which means the root rule is complete. Text is fed byte by byte;
// a code point split across tokens waits in the state as a partial UTF-8 sequence and
// is kept only while some stack could accept a code point it can still become.
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "grammar/grammar.h"

namespace seer::grammar {

// A set of stacks stored flat: stack i is data[offsets[i] .. offsets[i + 1]).
struct StackSet {
  std::vector<uint32_t> data;
  std::vector<uint32_t> offsets{0};
  size_t size() const { return offsets.size() - 1; }
  bool empty() const { return size() == 0; }
  void clear() {
    data.clear();
    offsets.assign(1, 0);
  }
};

struct MatchState {
  StackSet stacks;
  uint32_t partial = 0;      // bits of a code point begun but not finished
  uint8_t partial_left = 0;  // continuation bytes still expected
  uint8_t partial_len = 0;   // length of the whole sequence (bounds its code points: no overlong forms)
  bool dead() const { return stacks.empty(); }
  // A string that identifies the state (for the mask cache).
  std::string key() const;
};

// Stateless apart from scratch buffers; one per thread.
class StackMachine {
 public:
  // Bound on stacks per state: an ambiguous grammar could otherwise grow them without
  // limit. Past it the extra parses are dropped (docs/structured-outputs.md).
  static constexpr size_t kMaxStacks = 256;
  // Bounds on expanding the rule references on top of one stack: how deep the
  // expansion recurses, and how many references it expands (an ambiguous chain such
  // as r0 ::= r1 | r1 doubles at every link). Parses past either are dropped like the
  // stacks past kMaxStacks. GrammarBuilder's kMaxRuleChain keeps a grammar's own
  // chains well inside the depth; only references piled up by the text (nullable
  // continuations) can reach it.
  static constexpr int kMaxExpansionDepth = 4 * kMaxRuleChain;
  static constexpr int kMaxExpansionSteps = 1 << 16;

  explicit StackMachine(const Grammar& g) : g_(g) {}
  MatchState initial();
  // Feeds one byte; `out` becomes the next state (dead when the byte is refused).
  void advance(const MatchState& in, uint8_t byte, MatchState& out);
  // True when the text so far is a complete sentence of the grammar.
  [[nodiscard]] static bool can_end(const MatchState& s);
  // Feeds `bytes` to `s` in place; false (and `s` unspecified) when refused.
  [[nodiscard]] bool accept(MatchState& s, std::string_view bytes);

 private:
  void advance_code_point(const StackSet& in, uint32_t cp, StackSet& out);
  void expand(StackSet& out);  // expands scratch_ into out, within the bounds above
  void expand_within(StackSet& out, int depth);
  void add_unique(StackSet& out);
  [[nodiscard]] bool viable_partial(const StackSet& stacks, uint32_t partial, uint8_t left, uint8_t len) const;

  const Grammar& g_;
  std::vector<uint32_t> scratch_;
  int steps_left_ = 0;  // of the expansion under way
  MatchState tmp_;
};

}  // namespace seer::grammar
