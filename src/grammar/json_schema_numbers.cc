#include "grammar/json_schema_numbers.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "common/error.h"

namespace seer::grammar {

std::optional<Decimal> parse_decimal(const std::string& text) {
  size_t i = 0;
  Decimal d;
  if (i < text.size() && text[i] == '-') d.negative = true, ++i;
  std::string digits;
  long point = -1;
  for (; i < text.size() && (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.'); ++i) {
    if (text[i] == '.') {
      if (point >= 0) return std::nullopt;
      point = static_cast<long>(digits.size());
    } else {
      digits += text[i];
    }
  }
  if (digits.empty()) return std::nullopt;
  if (point < 0) point = static_cast<long>(digits.size());
  if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
    ++i;
    bool neg = false;
    if (i < text.size() && (text[i] == '+' || text[i] == '-')) neg = text[i++] == '-';
    long e = 0;
    size_t start = i;
    for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) e = std::min(e * 10 + (text[i] - '0'), 100000L);
    if (i == start) return std::nullopt;
    point += neg ? -e : e;
  }
  if (i != text.size()) return std::nullopt;
  if (point < 0) digits.insert(0, static_cast<size_t>(-point), '0'), point = 0;
  if (point > static_cast<long>(digits.size())) digits.append(static_cast<size_t>(point) - digits.size(), '0');
  d.integer = digits.substr(0, static_cast<size_t>(point));
  d.fraction = digits.substr(static_cast<size_t>(point));
  d.integer.erase(0, std::min(d.integer.find_first_not_of('0'), d.integer.size()));
  if (d.integer.empty()) d.integer = "0";
  while (!d.fraction.empty() && d.fraction.back() == '0') d.fraction.pop_back();
  if (d.is_zero()) d.negative = false;
  return d;
}

namespace {

int compare_magnitude(const Decimal& a, const Decimal& b) {
  if (a.integer.size() != b.integer.size()) return a.integer.size() < b.integer.size() ? -1 : 1;
  if (int c = a.integer.compare(b.integer)) return c < 0 ? -1 : 1;
  if (int c = a.fraction.compare(b.fraction)) return c < 0 ? -1 : 1;
  return 0;
}

}  // namespace

int compare(const Decimal& a, const Decimal& b) {
  if (a.negative != b.negative) return a.negative ? -1 : 1;
  const int m = compare_magnitude(a, b);
  return a.negative ? -m : m;
}

namespace {

std::string increment(std::string s) {
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '9') {
      ++s[i];
      return s;
    }
    s[i] = '0';
  }
  return "1" + s;
}

std::string decrement(std::string s) {  // s >= 1
  for (size_t i = s.size(); i-- > 0;) {
    if (s[i] != '0') {
      --s[i];
      break;
    }
    s[i] = '9';
  }
  s.erase(0, std::min(s.find_first_not_of('0'), s.size() - 1));
  return s;
}

Decimal plus_one(Decimal d) {  // d an integer
  if (!d.negative) d.integer = increment(d.integer);
  else if ((d.integer = decrement(d.integer)) == "0") d.negative = false;
  return d;
}

Decimal minus_one(Decimal d) {  // d an integer
  if (d.negative || d.integer == "0") d.negative = true, d.integer = increment(d.integer);
  else d.integer = decrement(d.integer);
  return d;
}

// The least integer >= (or >) a lower bound, the greatest <= (or <) an upper one.
Decimal lowest_integer(const Bound& b) {
  Decimal t{b.value.negative, b.value.integer, ""};  // truncated toward zero
  if (t.integer == "0") t.negative = false;
  const bool exact = b.value.fraction.empty();
  if (!t.negative && !b.value.negative) return exact && !b.exclusive ? t : plus_one(t);
  return exact && b.exclusive ? plus_one(t) : t;  // negative: truncation rounded up
}

Decimal highest_integer(const Bound& b) {
  Decimal t{b.value.negative, b.value.integer, ""};
  if (t.integer == "0") t.negative = false;
  const bool exact = b.value.fraction.empty();
  if (b.value.negative) return exact && !b.exclusive ? t : minus_one(t);
  return exact && b.exclusive ? minus_one(t) : t;
}

std::string digit_class(char lo, char hi) {
  if (lo == hi) return fmt::format("\"{}\"", lo);
  return fmt::format("[{}-{}]", lo, hi);
}

std::string any_digits(size_t n) { return n == 0 ? "\"\"" : fmt::format("[0-9]{{{}}}", n); }

// Fixed-length digit strings >= s (or <= s).
std::string at_least_fixed(RuleSet& rules, const std::string& s) {
  if (s.find_first_not_of('0') == std::string::npos) return any_digits(s.size());
  return rules.memo("uint>= " + s, [&] {
    std::string alt = digit_class(s[0], s[0]) + " " + at_least_fixed(rules, s.substr(1));
    if (s[0] != '9') alt += " | " + digit_class(static_cast<char>(s[0] + 1), '9') + " " + any_digits(s.size() - 1);
    return rules.rule("uint-ge", alt);
  });
}

std::string at_most_fixed(RuleSet& rules, const std::string& s) {
  if (s.find_first_not_of('9') == std::string::npos) return any_digits(s.size());
  return rules.memo("uint<= " + s, [&] {
    std::string alt = digit_class(s[0], s[0]) + " " + at_most_fixed(rules, s.substr(1));
    if (s[0] != '0') alt += " | " + digit_class('0', static_cast<char>(s[0] - 1)) + " " + any_digits(s.size() - 1);
    return rules.rule("uint-le", alt);
  });
}

// Digit strings of one length between a and b (a <= b), as alternatives.
std::string same_length_range(RuleSet& rules, const std::string& a, const std::string& b) {
  size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  std::string prefix = i ? gbnf_literal(a.substr(0, i)) + " " : "";
  if (i == a.size()) return prefix.empty() ? "\"\"" : prefix;
  const size_t rest = a.size() - i - 1;
  const std::string ra = a.substr(i + 1), rb = b.substr(i + 1);
  std::vector<std::string> alts;
  const bool a_all_low = ra.find_first_not_of('0') == std::string::npos;
  const bool b_all_high = rb.find_first_not_of('9') == std::string::npos;
  char lo = a[i], hi = b[i];
  if (!a_all_low) alts.push_back(digit_class(lo, lo) + " " + at_least_fixed(rules, ra)), ++lo;
  if (!b_all_high) --hi;
  if (lo <= hi) alts.push_back(digit_class(lo, hi) + " " + any_digits(rest));
  if (!b_all_high) alts.push_back(digit_class(b[i], b[i]) + " " + at_most_fixed(rules, rb));
  std::string body;
  for (const std::string& alt : alts) body += (body.empty() ? "" : " | ") + alt;
  return prefix + "( " + body + " )";
}

// Unsigned integers without leading zeros in [lo, hi] (lo <= hi, numerically).
std::string unsigned_range(RuleSet& rules, const std::string& lo, const std::string& hi) {
  std::string alts;
  for (size_t len = lo.size(); len <= hi.size(); ++len) {
    std::string a = len == lo.size() ? lo : "1" + std::string(len - 1, '0');
    std::string b = len == hi.size() ? hi : std::string(len, '9');
    alts += (alts.empty() ? "" : " | ") + same_length_range(rules, a, b);
  }
  return "( " + alts + " )";
}

// A bound past every numeral of kNumberDigits digits (an upper one above, a lower one
// below) asserts nothing the digit cap does not: drop it.
NumberBounds within_reach(NumberBounds b) {
  if (b.upper && !b.upper->value.negative && b.upper->value.integer.size() > kNumberDigits) b.upper.reset();
  if (b.lower && b.lower->value.negative && b.lower->value.integer.size() > kNumberDigits) b.lower.reset();
  return b;
}

size_t digits_of(const NumberBounds& b) {
  size_t n = kNumberDigits;
  for (const auto& side : {b.lower, b.upper})
    if (side) {
      if (side->value.integer.size() > kMaxBoundDigits || side->value.fraction.size() > kMaxBoundDigits)
        fail("a bound with more than {} digits is not supported (the number-bound digit limit)", kMaxBoundDigits);
      n = std::max({n, side->value.integer.size(), side->value.fraction.size()});
    }
  return n;
}

// A magnitude interval: [lo, hi] (hi absent: below 10^digits), lo/hi non-negative.
struct Span {
  Decimal lo;
  bool lo_exclusive = false;
  std::optional<Decimal> hi;
  bool hi_exclusive = false;
};

// The non-negative part and the negated negative part of a signed interval.
std::vector<std::pair<bool, Span>> split_by_sign(const NumberBounds& b) {
  std::vector<std::pair<bool, Span>> parts;
  const bool has_positive = !b.upper || !b.upper->value.negative;
  const bool has_negative = !b.lower || b.lower->value.negative;
  if (has_positive) {
    Span s;
    if (b.lower && !b.lower->value.negative) s.lo = b.lower->value, s.lo_exclusive = b.lower->exclusive;
    if (b.upper) s.hi = b.upper->value, s.hi_exclusive = b.upper->exclusive;
    parts.emplace_back(false, s);
  }
  if (has_negative) {
    Span s;
    if (b.upper && b.upper->value.negative) s.lo = b.upper->value, s.lo_exclusive = b.upper->exclusive;
    if (b.lower) s.hi = b.lower->value, s.hi_exclusive = b.lower->exclusive;
    s.lo.negative = false;
    if (s.hi) s.hi->negative = false;
    parts.emplace_back(true, s);
  }
  return parts;
}

// Fraction digit strings F (at most r digits) compared as 0.F with 0.s.
struct Fractions {
  std::string nonempty;  // alternatives for a non-empty F; "" when none
  bool empty_ok = false;
};

std::string with_optional_rest(const Fractions& f) {
  if (f.nonempty.empty()) return f.empty_ok ? "\"\"" : "";
  return f.empty_ok ? "( " + f.nonempty + " )?" : "( " + f.nonempty + " )";
}

std::string join(const std::vector<std::string>& alts) {
  std::string out;
  for (const std::string& a : alts)
    if (!a.empty()) out += (out.empty() ? "" : " | ") + a;
  return out;
}

std::string up_to_digits(size_t r) { return r == 0 ? "\"\"" : fmt::format("[0-9]{{0,{}}}", r); }

// F >= s (or > s), F <= s (or < s), a <= F <= b: by the first digit, recursing on the rest.
Fractions fractions_between(RuleSet& rules, const std::string& a, bool ea, const std::optional<std::string>& b, bool eb,
                            size_t r);

std::string digit_then(char d, const Fractions& rest) {
  const std::string tail = with_optional_rest(rest);
  if (tail.empty()) return "";
  return digit_class(d, d) + (tail == "\"\"" ? "" : " " + tail);
}

Fractions fractions_between(RuleSet& rules, const std::string& a, bool ea, const std::optional<std::string>& b, bool eb,
                            size_t r) {
  Fractions f;
  const bool a_zero = a.empty();
  f.empty_ok = a_zero && !ea && (!b || !b->empty() || !eb);
  if (r == 0) return f;
  const std::string key = fmt::format("frac {} {} {} {} {} {}", a, ea, b ? *b : "-", b.has_value(), eb, r);
  const std::string name = rules.memo(key, [&]() -> std::string {
    const char a0 = a_zero ? '0' : a[0];
    const std::string ar = a_zero ? "" : a.substr(1);
    std::vector<std::string> alts;
    if (!b) {
      alts.push_back(digit_then(a0, fractions_between(rules, ar, ea, std::nullopt, false, r - 1)));
      if (a0 != '9') alts.push_back(digit_class(static_cast<char>(a0 + 1), '9') + " " + up_to_digits(r - 1));
    } else {
      const char b0 = b->empty() ? '0' : (*b)[0];
      const std::string br = b->empty() ? "" : b->substr(1);
      if (a0 == b0) {
        alts.push_back(digit_then(a0, fractions_between(rules, ar, ea, br, eb, r - 1)));
      } else {
        alts.push_back(digit_then(a0, fractions_between(rules, ar, ea, std::nullopt, false, r - 1)));
        if (a0 + 1 <= b0 - 1) alts.push_back(digit_class(static_cast<char>(a0 + 1), static_cast<char>(b0 - 1)) + " " + up_to_digits(r - 1));
        alts.push_back(digit_then(b0, fractions_between(rules, "", false, br, eb, r - 1)));
      }
    }
    const std::string body = join(alts);
    return body.empty() ? std::string() : rules.rule("frac", body);
  });
  f.nonempty = name;
  return f;
}

std::string fraction_part(const Fractions& f) {
  if (f.nonempty.empty()) return f.empty_ok ? "\"\"" : "";
  const std::string dotted = "\".\" " + f.nonempty;
  return f.empty_ok ? "( " + dotted + " )?" : dotted;
}

std::string numeral(const std::string& integer, const Fractions& f) {
  const std::string frac = fraction_part(f);
  if (frac.empty()) return "";
  return gbnf_literal(integer) + (frac == "\"\"" ? "" : " " + frac);
}

// Non-negative numerals in a span (no exponent, at most `digits` digits a part).
std::string magnitudes_within(RuleSet& rules, const Span& s, size_t digits) {
  const std::string& ai = s.lo.integer;
  const std::string cap(digits, '9');
  std::vector<std::string> alts;
  const bool hi_bounded = s.hi && s.hi->integer.size() <= digits;
  if (hi_bounded && ai == s.hi->integer) {
    alts.push_back(numeral(ai, fractions_between(rules, s.lo.fraction, s.lo_exclusive, s.hi->fraction, s.hi_exclusive, digits)));
    return join(alts);
  }
  alts.push_back(numeral(ai, fractions_between(rules, s.lo.fraction, s.lo_exclusive, std::nullopt, false, digits)));
  const std::string top = hi_bounded ? s.hi->integer : cap;
  const std::string from = increment(ai);
  if (hi_bounded) {
    if (compare_magnitude(Decimal{false, from, ""}, Decimal{false, top, ""}) < 0)
      alts.push_back(unsigned_range(rules, from, decrement(top)) + " ( \".\" [0-9]{1," + std::to_string(digits) + "} )?");
    alts.push_back(numeral(top, fractions_between(rules, "", false, s.hi->fraction, s.hi_exclusive, digits)));
  } else if (compare_magnitude(Decimal{false, from, ""}, Decimal{false, top, ""}) <= 0) {
    alts.push_back(unsigned_range(rules, from, top) + " ( \".\" [0-9]{1," + std::to_string(digits) + "} )?");
  }
  return join(alts);
}

bool span_empty(const Span& s) {
  if (!s.hi) return false;
  const int c = compare_magnitude(s.lo, *s.hi);
  return c > 0 || (c == 0 && (s.lo_exclusive || s.hi_exclusive));
}

}  // namespace

std::optional<std::string> integers_within(RuleSet& rules, const NumberBounds& bounds) {
  const NumberBounds b = within_reach(bounds);
  const size_t digits = digits_of(b);
  NumberBounds ints;  // inclusive integer bounds
  if (b.lower) ints.lower = Bound{lowest_integer(*b.lower), false};
  if (b.upper) ints.upper = Bound{highest_integer(*b.upper), false};
  if (ints.lower && ints.upper && compare(ints.lower->value, ints.upper->value) > 0) return std::nullopt;
  std::vector<std::string> alts;
  for (auto& [negative, span] : split_by_sign(ints)) {
    if (negative && span.lo.is_zero()) span.lo.integer = "1";  // "-0" is written "0"
    if (span_empty(span)) continue;
    const bool reachable = !span.hi || span.hi->integer.size() <= digits;
    const std::string hi = reachable && span.hi ? span.hi->integer : std::string(digits, '9');
    if (compare_magnitude(span.lo, Decimal{false, hi, ""}) > 0) continue;
    alts.push_back((negative ? "\"-\" " : "") + unsigned_range(rules, span.lo.integer, hi));
  }
  if (alts.empty()) return std::nullopt;
  return "( " + join(alts) + " )";
}

std::optional<std::string> numbers_within(RuleSet& rules, const NumberBounds& bounds) {
  const NumberBounds b = within_reach(bounds);
  const size_t digits = digits_of(b);
  if (b.lower && b.upper) {
    const int c = compare(b.lower->value, b.upper->value);
    if (c > 0 || (c == 0 && (b.lower->exclusive || b.upper->exclusive))) return std::nullopt;
  }
  std::vector<std::string> alts;
  for (const auto& [negative, span] : split_by_sign(b)) {
    if (span_empty(span)) continue;
    const std::string m = magnitudes_within(rules, span, digits);
    if (!m.empty()) alts.push_back(std::string(negative ? "\"-\" " : "") + "( " + m + " )");
  }
  if (alts.empty()) return std::nullopt;
  return "( " + join(alts) + " )";
}

std::string integer_multiples_of(RuleSet& rules, uint64_t k) {
  if (k == 1) return "integer";
  return rules.memo(fmt::format("multiple-of {}", k), [&] {
    // State r: the digits so far are r modulo k; a digit d leads to (10 r + d) mod k.
    std::vector<std::string> names(k);
    for (uint64_t r = 0; r < k; ++r) names[r] = rules.fresh(fmt::format("mod{}-{}", k, r));
    auto step = [&](uint64_t r, bool leading) {
      std::vector<std::string> alts;
      std::vector<std::string> by_target(k);
      for (int d = leading ? 1 : 0; d <= 9; ++d) by_target[(10 * r + static_cast<uint64_t>(d)) % k] += static_cast<char>('0' + d);
      for (uint64_t t = 0; t < k; ++t)
        if (!by_target[t].empty()) alts.push_back("[" + by_target[t] + "] " + names[t]);
      return alts;
    };
    for (uint64_t r = 0; r < k; ++r) {
      std::vector<std::string> alts = step(r, false);
      if (r == 0) alts.push_back("\"\"");
      rules.emit(names[r], join(alts));
    }
    return rules.rule("multiple-of", "\"-\"? ( \"0\" | " + join(step(0, true)) + " )");
  });
}

}  // namespace seer::grammar
