#include "grammar/json_schema_scalars.h"

#include <cmath>

#include "common/error.h"
#include "grammar/json_schema_formats.h"
#include "grammar/json_schema_numbers.h"
#include "grammar/regex_to_gbnf.h"

namespace seer::grammar {

using nlohmann::ordered_json;

std::string pointer_escape(const std::string& key) {
  std::string out;
  for (char c : key) {
    if (c == '~') out += "~0";
    else if (c == '/') out += "~1";
    else out += c;
  }
  return out;
}

void keyword_error(const std::string& ptr, const std::string& key, const std::string& message) {
  fail("{}/{}: {}", ptr, pointer_escape(key), message);
}

std::optional<uint64_t> count_keyword(const ordered_json& s, const char* key, const std::string& ptr) {
  auto it = s.find(key);
  if (it == s.end()) return std::nullopt;
  const bool integral = it->is_number_integer() || (it->is_number_float() && std::floor(it->get<double>()) == it->get<double>());
  if (!integral || it->get<double>() < 0)
    keyword_error(ptr, key, fmt::format("'{}' must be a non-negative integer", key));
  if (it->get<double>() > static_cast<double>(kMaxCount))
    keyword_error(ptr, key, fmt::format("'{}' above {} is not supported (the count limit)", key, kMaxCount));
  return static_cast<uint64_t>(it->get<double>());
}

namespace {

Decimal decimal_keyword(const ordered_json& v, const std::string& ptr, const char* key) {
  if (!v.is_number()) keyword_error(ptr, key, fmt::format("'{}' must be a number", key));
  auto d = parse_decimal(v.dump());
  if (!d) keyword_error(ptr, key, fmt::format("'{}' is not a finite number", key));
  return *d;
}

void tighten(std::optional<Bound>& side, Bound b, bool lower) {
  if (!side) {
    side = b;
    return;
  }
  const int c = compare(b.value, side->value);
  if ((lower ? c > 0 : c < 0) || (c == 0 && b.exclusive)) side = b;
}

// minimum/maximum with exclusiveMinimum/exclusiveMaximum as numbers (draft 6+) or as
// booleans modifying them (draft 4).
NumberBounds bounds_of(const ordered_json& s, const std::string& ptr) {
  NumberBounds b;
  auto side = [&](const char* inclusive, const char* exclusive, bool lower) {
    std::optional<Bound>& out = lower ? b.lower : b.upper;
    const auto ex = s.find(exclusive);
    const bool draft4 = ex != s.end() && ex->is_boolean();
    if (auto it = s.find(inclusive); it != s.end())
      tighten(out, {decimal_keyword(*it, ptr, inclusive), draft4 && ex->get<bool>()}, lower);
    else if (draft4 && ex->get<bool>())
      keyword_error(ptr, exclusive, fmt::format("a boolean '{}' needs '{}' beside it", exclusive, inclusive));
    if (ex != s.end() && !draft4) tighten(out, {decimal_keyword(*ex, ptr, exclusive), true}, lower);
  };
  side("minimum", "exclusiveMinimum", true);
  side("maximum", "exclusiveMaximum", false);
  return b;
}

std::optional<std::string> within(RuleSet& rules, const NumberBounds& b, const std::string& ptr, bool integer) {
  try {
    return integer ? integers_within(rules, b) : numbers_within(rules, b);
  } catch (const Error& e) {
    keyword_error(ptr, b.lower ? "minimum" : "maximum", e.what());
  }
}

// multipleOf k: the integer k as a whole number, else nullopt.
std::optional<uint64_t> whole(const Decimal& k) {
  if (!k.fraction.empty() || k.integer.size() > 6) return std::nullopt;
  return std::stoull(k.integer);
}

}  // namespace

std::optional<std::string> integer_gbnf(RuleSet& rules, const ordered_json& s, const std::string& ptr) {
  const NumberBounds b = bounds_of(s, ptr);
  if (auto it = s.find("multipleOf"); it != s.end()) {
    const Decimal k = decimal_keyword(*it, ptr, "multipleOf");
    if (k.negative || k.is_zero()) keyword_error(ptr, "multipleOf", "'multipleOf' must be greater than 0");
    // 1/k whole (k = 0.5, 0.25, ...): every integer is a multiple, nothing more is asserted.
    const double kv = it->get<double>();
    const bool every = kv <= 1 && 1.0 / kv == std::floor(1.0 / kv);
    if (!every) {
      const auto n = whole(k);
      if (!n || *n > kMaxMultipleOf)
        keyword_error(ptr, "multipleOf", fmt::format("'multipleOf' for integers must be a whole number up to {} (the multipleOf limit)", kMaxMultipleOf));
      if (!b.empty() && *n != 1)
        keyword_error(ptr, "multipleOf", "'multipleOf' together with 'minimum'/'maximum' is not supported");
      if (*n != 1) return integer_multiples_of(rules, *n);
    }
  }
  if (b.empty()) return "integer";
  return within(rules, b, ptr, true);
}

std::optional<std::string> number_gbnf(RuleSet& rules, const ordered_json& s, const std::string& ptr) {
  const NumberBounds b = bounds_of(s, ptr);
  if (auto it = s.find("multipleOf"); it != s.end()) {
    const Decimal k = decimal_keyword(*it, ptr, "multipleOf");
    if (k.negative || k.is_zero()) keyword_error(ptr, "multipleOf", "'multipleOf' must be greater than 0");
    if (!b.empty()) keyword_error(ptr, "multipleOf", "'multipleOf' together with 'minimum'/'maximum' is not supported");
    if (k.fraction.empty()) return integer_gbnf(rules, s, ptr);  // multiples of a whole number are integers
    // 10^-j: at most j fraction digits.
    if (k.integer == "0" && k.fraction.find_first_not_of('0') == k.fraction.size() - 1 && k.fraction.back() == '1')
      return "integer ( \".\" [0-9]{1," + std::to_string(k.fraction.size()) + "} )?";
    keyword_error(ptr, "multipleOf", "'multipleOf' for numbers must be a whole number or a power of ten (0.1, 0.01, ...)");
  }
  if (b.empty()) return "number";
  return within(rules, b, ptr, false);
}

std::optional<std::string> string_gbnf(RuleSet& rules, const ordered_json& s, const std::string& ptr) {
  const auto min = count_keyword(s, "minLength", ptr);
  const auto max = count_keyword(s, "maxLength", ptr);
  if (min && max && *max < *min) return std::nullopt;
  const bool lengths = min.value_or(0) > 0 || max;
  if (auto it = s.find("pattern"); it != s.end()) {
    if (!it->is_string()) keyword_error(ptr, "pattern", "'pattern' must be a string");
    if (lengths) keyword_error(ptr, "pattern", "'pattern' together with 'minLength'/'maxLength' is not supported");
    try {
      return "\"\\\"\" " + regex_to_gbnf(rules, it->get<std::string>()) + " \"\\\"\"";
    } catch (const Error& e) {
      keyword_error(ptr, "pattern", e.what());
    }
  }
  if (auto it = s.find("format"); it != s.end() && it->is_string()) {
    // A format seer does not know is an annotation (as JSON Schema 2020-12 has it).
    if (auto f = format_gbnf(rules, it->get<std::string>())) {
      if (lengths) keyword_error(ptr, "format", "'format' together with 'minLength'/'maxLength' is not supported");
      return "\"\\\"\" " + *f + " \"\\\"\"";
    }
  }
  if (!lengths) return "string";
  return "\"\\\"\" " + counted(rules, "char", min.value_or(0), max) + " \"\\\"\"";
}

}  // namespace seer::grammar
