#pragma once
// Jinja's binary operators over values, with Python's rules (str + str, list + list,
// str * int, / always gives a float, // and % floor toward minus infinity).
#include <string>

#include "template/value.h"

namespace seer::tmpl {

// op: + - * / // % ** ~ == != < <= > >= in "not in". Throws seer::Error for
// operands the operator does not take.
[[nodiscard]] Value binary_op(const std::string& op, const Value& a, const Value& b);
// `a in b`: substring, list element or dict key.
[[nodiscard]] bool contains(const Value& container, const Value& item);
// The items a for loop visits: list elements, dict keys, string characters; an
// Undefined iterates as empty. Throws for anything else.
[[nodiscard]] List iterate(const Value& v);

}  // namespace seer::tmpl
