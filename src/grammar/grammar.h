#pragma once
// A context-free grammar over Unicode code points, flattened for the matcher: every
// rule is a list of alternatives, every alternative a run of elements ending in an
// End marker, all stored in one array so a position (an index into it) names "the next
// thing to match" in some alternative. Elements are character classes (terminals) or
// references to rules. Repetition and groups are desugared into generated rules by
// the GBNF parser, so the matcher knows only these three kinds.
#include <cstddef>
#include <cstdint>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace seer::grammar {

// Limits on a grammar a client sends (docs/security.md, "Limits on request structure").
// The longest chain of rules in which each can begin with the next (r0 ::= r1 ..., a
// group's first item, a nullable prefix): the matcher expands such a chain by
// recursion, so finish() refuses a longer one.
constexpr int kMaxRuleChain = 1000;
// Elements (characters, rule references, alternative ends) of a whole grammar after
// repetitions are expanded: "x"{10000} is 10,000 of them.
constexpr size_t kMaxGrammarElements = size_t{1} << 20;

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
// definition, that no rule is left-recursive and no rule chain is longer than
// kMaxRuleChain, and sets the root. define() refuses to grow the grammar past
// kMaxGrammarElements.
class GrammarBuilder {
 public:
  using Sequence = std::vector<Element>;
  uint32_t rule_id(const std::string& name);  // creates an undefined rule on first use
  uint32_t fresh_rule(const std::string& base);  // a new generated rule "base_N"
  uint32_t add_class(CharClass c);
  void define(uint32_t rule, const std::vector<Sequence>& alternatives);
  bool defined(uint32_t rule) const { return defined_[rule]; }
  size_t elements() const { return elements_; }  // so far, End markers included
  // Throws seer::Error naming the first undefined or left-recursive rule.
  [[nodiscard]] Grammar finish(const std::string& root_name);

 private:
  std::vector<bool> nullable_rules() const;
  void check_rule_chains(const std::vector<bool>& nullable) const;

  std::vector<std::string> names_;
  std::unordered_map<std::string, uint32_t> ids_;  // names_ -> index
  std::vector<std::vector<Sequence>> rules_;
  std::vector<bool> defined_;
  std::vector<CharClass> classes_;
  std::unordered_map<std::string, uint32_t> class_ids_;  // a class's ranges as bytes -> index
  size_t elements_ = 0;
};

}  // namespace seer::grammar
