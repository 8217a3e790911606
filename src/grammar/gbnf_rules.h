#pragma once
// GBNF text built rule by rule: the JSON Schema compiler's parts (numbers, strings,
// regexes, counted repetition) each add the rules they need under fresh names that
// start with one prefix, so several compiled schemas can share a grammar.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace seer::grammar {

class RuleSet {
 public:
  explicit RuleSet(std::string prefix) : prefix_(std::move(prefix)) {}
  const std::string& prefix() const { return prefix_; }
  // A new rule name "<prefix>-<hint>-<n>" (the hint sanitised to GBNF name characters).
  std::string fresh(const std::string& hint);
  void emit(const std::string& name, const std::string& definition);
  // A fresh rule defined as `definition`; returns its name.
  std::string rule(const std::string& hint, const std::string& definition);
  // The rule already made for `key`, or the one `make` defines (for shared helpers).
  template <typename Make>
  std::string memo(const std::string& key, Make make) {
    if (auto it = memo_.find(key); it != memo_.end()) return it->second;
    std::string name = make();
    memo_.emplace(key, name);
    return name;
  }
  std::string text() const;

 private:
  std::string prefix_;
  std::vector<std::pair<std::string, std::string>> rules_;
  std::map<std::string, std::string> memo_;
  int counter_ = 0;
};

// Counts (items, characters, properties) up to this value compile, in rules
// logarithmic in the count; a larger one is refused naming the limit.
constexpr uint64_t kMaxCount = 1'000'000'000;

// An expression matching `item` repeated between `min` and `max` times (unbounded
// when absent), without unrolling: exactly-n rules by halving (E(2k) = E(k) E(k)) and
// at-most-m rules that split the range in two disjoint halves, so the grammar stays
// unambiguous and the matcher keeps about log2(m) stacks.
std::string counted(RuleSet& rules, const std::string& item, uint64_t min, std::optional<uint64_t> max);

// `s` as a GBNF string literal (with quotes), escaping what GBNF needs.
std::string gbnf_literal(const std::string& s);

}  // namespace seer::grammar
