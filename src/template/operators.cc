#include "template/operators.h"

#include <cmath>

#include "common/error.h"

namespace seer::tmpl {

namespace {

bool numeric(const Value& v) { return v.is_number() || v.is_bool(); }
bool both_int(const Value& a, const Value& b) { return (a.is_int() || a.is_bool()) && (b.is_int() || b.is_bool()); }
int64_t int_of(const Value& v) { return v.is_bool() ? v.as_bool() : v.as_int(); }

[[noreturn]] void unsupported(const std::string& op, const Value& a, const Value& b) {
  fail("unsupported operand type(s) for {}: '{}' and '{}'", op, a.type_name(), b.type_name());
}

Value repeat(const Value& seq, int64_t n) {
  const size_t unit = seq.is_string() ? seq.as_string().size() : seq.as_list().size();
  if (n > 0 && unit > 0 && static_cast<uint64_t>(n) > (16u << 20) / unit) fail("repetition longer than 16 Mi items");
  if (seq.is_string()) {
    std::string out;
    for (int64_t i = 0; i < n; ++i) out += seq.as_string();
    return Value(out);
  }
  List out;
  for (int64_t i = 0; i < n; ++i) out.insert(out.end(), seq.as_list().begin(), seq.as_list().end());
  return Value::list(std::move(out));
}

Value arithmetic(const std::string& op, const Value& a, const Value& b) {
  if (!numeric(a) || !numeric(b)) unsupported(op, a, b);
  const bool ints = both_int(a, b);
  if (op == "+") return ints ? Value(int_of(a) + int_of(b)) : Value(a.as_double() + b.as_double());
  if (op == "-") return ints ? Value(int_of(a) - int_of(b)) : Value(a.as_double() - b.as_double());
  if (op == "*") return ints ? Value(int_of(a) * int_of(b)) : Value(a.as_double() * b.as_double());
  if (op == "/") {
    if (b.as_double() == 0) fail("division by zero");
    return Value(a.as_double() / b.as_double());
  }
  if (op == "//" || op == "%") {
    if (b.as_double() == 0) fail("integer division or modulo by zero");
    if (ints) {
      int64_t x = int_of(a), y = int_of(b);
      int64_t q = x / y, r = x % y;
      if (r != 0 && ((r < 0) != (y < 0))) --q, r += y;
      return op == "//" ? Value(q) : Value(r);
    }
    double x = a.as_double(), y = b.as_double();
    double q = std::floor(x / y);
    return op == "//" ? Value(q) : Value(x - q * y);
  }
  if (op == "**") {
    if (ints && int_of(b) >= 0) {
      int64_t r = 1;
      for (int64_t i = 0; i < int_of(b); ++i) r *= int_of(a);
      return Value(r);
    }
    return Value(std::pow(a.as_double(), b.as_double()));
  }
  unsupported(op, a, b);
}

}  // namespace

bool contains(const Value& c, const Value& item) {
  if (c.is_string()) {
    if (!item.is_string()) fail("'in <string>' requires string as left operand, not {}", item.type_name());
    return c.as_string().find(item.as_string()) != std::string::npos;
  }
  if (c.is_list()) {
    for (const auto& e : c.as_list())
      if (equal(e, item)) return true;
    return false;
  }
  if (c.is_dict()) return item.is_string() && c.find(item.as_string()) != nullptr;
  if (c.is_undefined()) return false;
  fail("argument of type '{}' is not iterable", c.type_name());
}

List iterate(const Value& v) {
  if (v.is_list()) return v.as_list();
  if (v.is_dict()) {
    List keys;
    for (const auto& [k, e] : v.as_dict()) keys.emplace_back(k);
    return keys;
  }
  if (v.is_string()) {
    List chars;
    for (auto& c : code_points(v.as_string())) chars.emplace_back(std::move(c));
    return chars;
  }
  if (v.is_undefined()) return {};
  fail("'{}' object is not iterable", v.type_name());
}

Value binary_op(const std::string& op, const Value& a, const Value& b) {
  if (op == "==") return Value(equal(a, b));
  if (op == "!=") return Value(!equal(a, b));
  if (op == "<") return Value(less(a, b));
  if (op == ">") return Value(less(b, a));
  if (op == "<=") return Value(!less(b, a));
  if (op == ">=") return Value(!less(a, b));
  if (op == "in") return Value(contains(b, a));
  if (op == "not in") return Value(!contains(b, a));
  if (op == "~") return Value(a.str() + b.str());
  if (op == "+") {
    if (a.is_string() && b.is_string()) return Value(a.as_string() + b.as_string());
    if (a.is_list() && b.is_list()) {
      List out = a.as_list();
      out.insert(out.end(), b.as_list().begin(), b.as_list().end());
      return Value::list(std::move(out));
    }
  }
  if (op == "*") {
    if ((a.is_string() || a.is_list()) && (b.is_int() || b.is_bool())) return repeat(a, int_of(b));
    if ((b.is_string() || b.is_list()) && (a.is_int() || a.is_bool())) return repeat(b, int_of(a));
  }
  return arithmetic(op, a, b);
}

}  // namespace seer::tmpl
