#pragma once
// A context-free grammar over Unicode code points, flattened for the matcher: every
// rule is a list of alternatives, every alternative a run of elements ending in an
// End marker, all stored in one array so a position (an index into it) names "the next
// thing to match" in some alternative. Elements are character classes (terminals) or
// references to rules. Repetition and groups are desugared into generated rules by
// the GBNF parser, so the matcher knows only these three kinds.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace seer::grammar {

struct CodeRange {
  uint32_t lo = 0, hi = 0;  // inclusive
};

// A set of code points: sorted ranges, possibly negated ([^...], and "." = [^]).
struct CharClass {
  std::vector<CodeRange> ranges;
  bool negated = false;
  bool contains(uint32_t cp) const;
  // True when some code point in [lo, hi] is in the set.
  bool intersects(uint32_t lo, uint32_t hi) const;
};

enum class ElementKind : uint8_t { End, Chars, RuleRef };

struct Element {
  ElementKind kind = ElementKind::End;
  uint32_t index = 0;  // CharClass index (Chars) or rule id (RuleRef)
};

struct Grammar {
  std::vector<std::string> rule_names;
  std::vector<CharClass> classes;
  std::vector<Element> elements;                     // flat, see above
  std::vector<std::vector<uint32_t>> rule_alternatives;  // rule id -> first element of each alternative
  uint32_t root = 0;

  const Element& at(uint32_t pos) const { return elements[pos]; }
};

// Builds a Grammar rule by rule (the parser and tests use it). Rules may be referenced
// before they are defined; finish() checks that every referenced rule has a
// definition, that no rule is left-recursive, and sets the root.
class GrammarBuilder {
 public:
  using Sequence = std::vector<Element>;
  uint32_t rule_id(const std::string& name);  // creates an undefined rule on first use
  uint32_t fresh_rule(const std::string& base);  // a new generated rule "base_N"
  uint32_t add_class(CharClass c);
  void define(uint32_t rule, const std::vector<Sequence>& alternatives);
  bool defined(uint32_t rule) const { return defined_[rule]; }
  // Throws seer::Error naming the first undefined or left-recursive rule.
  [[nodiscard]] Grammar finish(const std::string& root_name);

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<Sequence>> rules_;
  std::vector<bool> defined_;
  std::vector<CharClass> classes_;
};

}  // namespace seer::grammar
