#include "grammar/gbnf_rules.h"

#include <cctype>

#include <fmt/format.h>

namespace seer::grammar {

std::string RuleSet::fresh(const std::string& hint) {
  std::string base;
  for (char c : hint) base += std::isalnum(static_cast<unsigned char>(c)) ? c : '-';
  if (base.size() > 40) base.resize(40);
  return prefix_ + "-" + base + "-" + std::to_string(counter_++);
}

void RuleSet::emit(const std::string& name, const std::string& definition) { rules_.emplace_back(name, definition); }

std::string RuleSet::rule(const std::string& hint, const std::string& definition) {
  std::string name = fresh(hint);
  emit(name, definition);
  return name;
}

std::string RuleSet::text() const {
  std::string out;
  for (const auto& [name, def] : rules_) out += name + " ::= " + def + "\n";
  return out;
}

namespace {

// Small counts are written out; past this the halving rules take over.
constexpr uint64_t kUnrolled = 4;

std::string exactly(RuleSet& rules, const std::string& item, uint64_t n) {
  if (n == 0) return "\"\"";
  if (n <= kUnrolled) {
    std::string out;
    for (uint64_t i = 0; i < n; ++i) out += (i ? " " : "") + item;
    return out;
  }
  return rules.memo(fmt::format("exactly {} {}", item, n), [&] {
    const std::string half = exactly(rules, item, n / 2);
    return rules.rule("exactly", half + " " + half + (n % 2 ? " " + item : ""));
  });
}

// 0..m copies. U(m) = U(h) | E(h) item U(m - h - 1) with h = (m - 1) / 2: the first
// alternative takes at most h copies, the second at least h + 1.
std::string at_most(RuleSet& rules, const std::string& item, uint64_t m) {
  if (m == 0) return "\"\"";
  if (m == 1) return "( " + item + " )?";
  return rules.memo(fmt::format("at-most {} {}", item, m), [&] {
    const uint64_t h = (m - 1) / 2;
    const std::string low = at_most(rules, item, h);
    const std::string high = exactly(rules, item, h) + " " + item + " " + at_most(rules, item, m - h - 1);
    return rules.rule("at-most", low + " | " + high);
  });
}

}  // namespace

std::string counted(RuleSet& rules, const std::string& item, uint64_t min, std::optional<uint64_t> max) {
  std::string out = exactly(rules, item, min);
  if (!max) {
    const std::string star = rules.memo("star " + item, [&] { return rules.rule("star", "( " + item + " )*"); });
    return min == 0 ? star : out + " " + star;
  }
  if (*max == min) return out;
  const std::string rest = at_most(rules, item, *max - min);
  return min == 0 ? rest : out + " " + rest;
}

std::string gbnf_literal(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    if (c == '"' || c == '\\') out += '\\', out += static_cast<char>(c);
    else if (c == '\n') out += "\\n";
    else if (c == '\r') out += "\\r";
    else if (c == '\t') out += "\\t";
    else if (c < 0x20) out += fmt::format("\\x{:02X}", c);
    else out += static_cast<char>(c);
  }
  return out + "\"";
}

}  // namespace seer::grammar
