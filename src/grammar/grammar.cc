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
  if (auto it = ids_.find(name); it != ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(names_.size());
  names_.push_back(name);
  ids_.emplace(name, id);
  rules_.emplace_back();
  defined_.push_back(false);
  return id;
}

uint32_t GrammarBuilder::fresh_rule(const std::string& base) {
  for (size_t n = names_.size();; ++n) {
    std::string name = base + "_" + std::to_string(n);
    if (!ids_.count(name)) return rule_id(name);
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
  std::string key(1, c.negated ? '^' : '=');
  key.append(reinterpret_cast<const char*>(c.ranges.data()), c.ranges.size() * sizeof(CodeRange));
  if (auto it = class_ids_.find(key); it != class_ids_.end()) return it->second;
  const auto id = static_cast<uint32_t>(classes_.size());
  classes_.push_back(std::move(c));
  class_ids_.emplace(std::move(key), id);
  return id;
}

void GrammarBuilder::define(uint32_t rule, const std::vector<Sequence>& alternatives) {
  if (defined_[rule]) fail("grammar: rule '{}' is defined twice", names_[rule]);
  size_t added = 0;
  for (const Sequence& alt : alternatives) added += alt.size() + 1;
  if (elements_ + added > kMaxGrammarElements)
    fail("grammar: more than {} elements once repetitions are expanded (the GBNF size limit), at rule '{}'",
         kMaxGrammarElements, names_[rule]);
  elements_ += added;
  rules_[rule] = alternatives;
  defined_[rule] = true;
}

// Rules that can match "", by a worklist over the alternatives made only of rule
// references (linear in the grammar's size, whatever order the rules come in).
std::vector<bool> GrammarBuilder::nullable_rules() const {
  const size_t n = rules_.size();
  std::vector<bool> nullable(n, false);
  std::vector<uint32_t> owner, pending;                // per candidate alternative
  std::vector<std::vector<uint32_t>> used_by(n);       // rule -> candidate alternatives naming it
  std::vector<uint32_t> queue;
  for (size_t r = 0; r < n; ++r)
    for (const Sequence& alt : rules_[r]) {
      const bool refs_only =
          std::all_of(alt.begin(), alt.end(), [](const Element& e) { return e.kind == ElementKind::RuleRef; });
      if (!refs_only) continue;
      if (alt.empty()) {
        if (!nullable[r]) queue.push_back(static_cast<uint32_t>(r));
        nullable[r] = true;
        continue;
      }
      const auto a = static_cast<uint32_t>(owner.size());
      owner.push_back(static_cast<uint32_t>(r));
      pending.push_back(static_cast<uint32_t>(alt.size()));
      for (const Element& e : alt) used_by[e.index].push_back(a);
    }
  while (!queue.empty()) {
    const uint32_t s = queue.back();
    queue.pop_back();
    for (uint32_t a : used_by[s]) {
      if (--pending[a] > 0 || nullable[owner[a]]) continue;
      nullable[owner[a]] = true;
      queue.push_back(owner[a]);
    }
  }
  return nullable;
}

// Left recursion (a rule reachable from itself through leftmost references that
// follow only nullable elements) and chains of such references longer than
// kMaxRuleChain. The search recurses along one chain, so its depth is bounded too.
void GrammarBuilder::check_rule_chains(const std::vector<bool>& nullable) const {
  const size_t n = rules_.size();
  std::vector<std::vector<uint32_t>> left(n);
  for (size_t r = 0; r < n; ++r)
    for (const Sequence& alt : rules_[r])
      for (const Element& e : alt) {
        if (e.kind != ElementKind::RuleRef) break;
        left[r].push_back(e.index);
        if (!nullable[e.index]) break;
      }
  std::vector<uint8_t> mark(n, 0);   // 0 new, 1 on the path, 2 done
  std::vector<int> longest(n, 0);    // the longest chain starting at a done rule
  auto too_long = [&](uint32_t r) {
    fail("grammar: more than {} rules chained by their first references, through rule '{}' (the GBNF rule-chain "
         "limit)",
         kMaxRuleChain, names_[r]);
  };
  std::function<void(uint32_t, int)> visit = [&](uint32_t r, int depth) {
    if (depth > kMaxRuleChain) too_long(r);
    mark[r] = 1;
    int chain = 1;
    for (uint32_t s : left[r]) {
      if (mark[s] == 1) fail("grammar: rule '{}' is left-recursive (it can start with itself)", names_[s]);
      if (mark[s] == 0) visit(s, depth + 1);
      chain = std::max(chain, longest[s] + 1);
    }
    if (chain > kMaxRuleChain) too_long(r);
    longest[r] = chain;
    mark[r] = 2;
  };
  for (uint32_t r = 0; r < n; ++r)
    if (mark[r] == 0) visit(r, 1);
}

Grammar GrammarBuilder::finish(const std::string& root_name) {
  auto root = ids_.find(root_name);
  if (root == ids_.end() || !defined_[root->second]) fail("grammar: no '{}' rule (the start symbol)", root_name);
  for (size_t r = 0; r < rules_.size(); ++r)
    if (!defined_[r]) fail("grammar: rule '{}' is used but never defined", names_[r]);
  check_rule_chains(nullable_rules());

  const size_t n = rules_.size();
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
  g.root = root->second;
  return g;
}

}  // namespace seer::grammar
