#pragma once
// Digit-range grammars: the JSON numerals whose value lies between two decimal bounds,
// exactly (no floating-point comparison: the bounds are read as the decimals the
// schema wrote). Bounded numbers are written without an exponent; integers as digits.
#include <cstdint>
#include <optional>
#include <string>

#include "grammar/gbnf_rules.h"

namespace seer::grammar {

// A decimal: sign, integer digits without leading zeros ("0" for zero), fraction
// digits without trailing zeros.
struct Decimal {
  bool negative = false;
  std::string integer = "0";
  std::string fraction;
  bool is_zero() const { return integer == "0" && fraction.empty(); }
};

// The shortest decimal that reads back as `text`'s number (a JSON numeral, possibly
// with an exponent); nullopt for text that is not one.
std::optional<Decimal> parse_decimal(const std::string& text);
int compare(const Decimal& a, const Decimal& b);

struct Bound {
  Decimal value;
  bool exclusive = false;
};

struct NumberBounds {
  std::optional<Bound> lower, upper;
  bool empty() const { return !lower && !upper; }
};

// Integer and fraction digits a bounded numeral may have unless a bound needs more,
// and the most digits a bound may have (a larger one is refused).
constexpr size_t kNumberDigits = 16;
constexpr size_t kMaxBoundDigits = 40;
// multipleOf for integers is a remainder automaton of this many states at most.
constexpr uint64_t kMaxMultipleOf = 1000;

// The integers within `b` (nullopt: none is). Throws seer::Error "..." (no pointer)
// for a bound past kMaxBoundDigits.
std::optional<std::string> integers_within(RuleSet& rules, const NumberBounds& b);
// The numbers within `b`, without exponent.
std::optional<std::string> numbers_within(RuleSet& rules, const NumberBounds& b);
// The integers that are multiples of k (1 <= k <= kMaxMultipleOf).
std::string integer_multiples_of(RuleSet& rules, uint64_t k);

}  // namespace seer::grammar
