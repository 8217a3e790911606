#include "grammar/grammar.h"

#include <algorithm>
#include <functional>

#include "common/error.h"

namespace seer::grammar {

bool CharClass::contains(uint32_t cp) const { return intersects(cp, cp); }

bool CharClass::intersects(uint32_t lo, uint32_t hi) const {
  if (!negated) {
    for (const CodeRange& r : ranges)
      if (r.lo <= hi && lo <= r.hi) return true;
    return false;
  }
  // Negated: some point of [lo, hi] lies outside every range. Ranges are sorted and
  // merged, so walk them covering [lo, ...].
  uint32_t next = lo;
  for (const CodeRange& r : ranges) {
    if (r.hi < next) continue;
    if (r.lo > next) return true;
    if (r.hi >= hi) return false;
    next = r.hi + 1;
  }
  return next <= hi;
}

uint32_t GrammarBuilder::rule_id(const std::string& name) {
  auto it = std::find(names_.begin(), names_.end(), name);
  if (it != names_.end()) return static_cast<uint32_t>(it - names_.begin());
  names_.push_back(name);
  rules_.emplace_back();
  defined_.push_back(false);
  return static_cast<uint32_t>(names_.size() - 1);
}

uint32_t GrammarBuilder::fresh_rule(const std::string& base) {
  for (size_t n = names_.size();; ++n) {
    std::string name = base + "_" + std::to_string(n);
    if (std::find(names_.begin(), names_.end(), name) == names_.end()) return rule_id(name);
  }
}

uint32_t GrammarBuilder::add_class(CharClass c) {
  std::sort(c.ranges.begin(), c.ranges.end(), [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
  std::vector<CodeRange> merged;
  for (const CodeRange& r : c.ranges) {
    if (!merged.empty() && r.lo <= merged.back().hi + 1) merged.back().hi = std::max(merged.back().hi, r.hi);
    else merged.push_back(r);
  }
  c.ranges = std::move(merged);
  for (size_t i = 0; i < classes_.size(); ++i) {
    const CharClass& o = classes_[i];
    if (o.negated == c.negated && o.ranges.size() == c.ranges.size() &&
        std::equal(o.ranges.begin(), o.ranges.end(), c.ranges.begin(),
                   [](const CodeRange& a, const CodeRange& b) { return a.lo == b.lo && a.hi == b.hi; }))
      return static_cast<uint32_t>(i);
  }
  classes_.push_back(std::move(c));
  return static_cast<uint32_t>(classes_.size() - 1);
}

void GrammarBuilder::define(uint32_t rule, const std::vector<Sequence>& alternatives) {
  if (defined_[rule]) fail("grammar: rule '{}' is defined twice", names_[rule]);
  rules_[rule] = alternatives;
  defined_[rule] = true;
}

Grammar GrammarBuilder::finish(const std::string& root_name) {
  auto root = std::find(names_.begin(), names_.end(), root_name);
  if (root == names_.end() || !defined_[root - names_.begin()])
    fail("grammar: no '{}' rule (the start symbol)", root_name);
  for (size_t r = 0; r < rules_.size(); ++r)
    if (!defined_[r]) fail("grammar: rule '{}' is used but never defined", names_[r]);

  // Nullable rules (can match ""), then left recursion: a rule reachable from itself
  // through leftmost references that follow only nullable elements.
  const size_t n = rules_.size();
  std::vector<bool> nullable(n, false);
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t r = 0; r < n; ++r) {
      if (nullable[r]) continue;
      for (const Sequence& alt : rules_[r]) {
        bool all = std::all_of(alt.begin(), alt.end(), [&](const Element& e) {
          return e.kind == ElementKind::RuleRef && nullable[e.index];
        });
        if (all) {
          nullable[r] = changed = true;
          break;
        }
      }
    }
  }
  std::vector<std::vector<uint32_t>> left(n);
  for (size_t r = 0; r < n; ++r)
    for (const Sequence& alt : rules_[r])
      for (const Element& e : alt) {
        if (e.kind != ElementKind::RuleRef) break;
        left[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
  std::vector<uint8_t> mark(n, 0);  // 0 new, 1 on the path, 2 done
  std::function<void(uint32_t)> visit = [&](uint32_t r) {
    mark[r] = 1;
    for (uint32_t s : left[r]) {
      if (mark[s] == 1) fail("grammar: rule '{}' is left-recursive (it can start with itself)", names_[s]);
      if (mark[s] == 0) visit(s);
    }
    mark[r] = 2;
  };
  for (uint32_t r = 0; r < n; ++r)
    if (mark[r] == 0) visit(r);

  Grammar g;
  g.rule_names = names_;
  g.classes = classes_;
  g.rule_alternatives.resize(n);
  for (size_t r = 0; r < n; ++r)
    for (const Sequence& alt : rules_[r]) {
      g.rule_alternatives[r].push_back(static_cast<uint32_t>(g.elements.size()));
      g.elements.insert(g.elements.end(), alt.begin(), alt.end());
      g.elements.push_back({ElementKind::End, 0});
    }
  g.root = static_cast<uint32_t>(root - names_.begin());
  return g;
}

}  // namespace seer::grammar
