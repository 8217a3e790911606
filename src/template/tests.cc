// Jinja's built-in tests (`x is defined`, `x is not none`, `x is equalto 3`).
#include "common/error.h"
#include "template/filters.h"
#include "template/operators.h"
#include "template/text_util.h"

namespace seer::tmpl {

namespace {

const Value& arg(const CallArgs& a, const std::string& test) {
  const Value* v = a.get(0, nullptr);
  if (!v) fail("test '{}' needs an argument", test);
  return *v;
}

}  // namespace

bool apply_test(const std::string& name, const Value& v, const CallArgs& a) {
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "mapping") return v.is_dict();
  if (name == "iterable") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "sequence") return v.is_list() || v.is_dict() || v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is_int();
  if (name == "float") return v.is_float();
  if (name == "boolean") return v.is_bool();
  if (name == "true") return v.is_bool() && v.as_bool();
  if (name == "false") return v.is_bool() && !v.as_bool();
  if (name == "callable") return v.is_function();
  if (name == "odd" || name == "even") {
    if (!v.is_int()) fail("test '{}' needs an integer, not {}", name, v.type_name());
    return (v.as_int() % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const Value& d = arg(a, name);
    if (!v.is_int() || !d.is_int() || d.as_int() == 0) fail("divisibleby needs nonzero integers");
    return v.as_int() % d.as_int() == 0;
  }
  if (name == "lower") return v.is_string() && lower(v.as_string()) == v.as_string();
  if (name == "upper") return v.is_string() && upper(v.as_string()) == v.as_string();
  if (name == "equalto" || name == "eq" || name == "==") return equal(v, arg(a, name));
  if (name == "ne" || name == "!=") return !equal(v, arg(a, name));
  if (name == "sameas") {
    const Value& o = arg(a, name);
    if (v.is_none() || o.is_none() || v.is_bool() || o.is_bool()) return v.kind() == o.kind() && equal(v, o);
    return false;
  }
  if (name == "lt" || name == "<" || name == "lessthan") return less(v, arg(a, name));
  if (name == "gt" || name == ">" || name == "greaterthan") return less(arg(a, name), v);
  if (name == "le" || name == "<=") return !less(arg(a, name), v);
  if (name == "ge" || name == ">=") return !less(v, arg(a, name));
  if (name == "in") return contains(arg(a, name), v);
  fail("no test named '{}'", name);
}

}  // namespace seer::tmpl
