// Expression evaluation of Evaluator (statements are in evaluator.cc).
#include <algorithm>
#include <cstdint>
#include <optional>

#include "template/evaluator.h"
#include "template/filters.h"
#include "template/operators.h"

namespace seer::tmpl {

namespace {

// Python's index rules: negative counts from the end; out of range is Undefined.
Value item_at(const Value& obj, int64_t i) {
  if (obj.is_list()) {
    const int64_t n = static_cast<int64_t>(obj.as_list().size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined();
    return obj.as_list()[static_cast<size_t>(i)];
  }
  std::vector<std::string> cps = code_points(obj.as_string());
  const int64_t n = static_cast<int64_t>(cps.size());
  if (i < 0) i += n;
  if (i < 0 || i >= n) return Value::undefined();
  return Value(cps[static_cast<size_t>(i)]);
}

std::string describe_undefined(const Value& v) {
  return v.undefined_name().empty() ? "value is undefined" : "'" + v.undefined_name() + "' is undefined";
}

}  // namespace

Value Evaluator::eval(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case Expr::Kind::Literal: return e.value;
    case Expr::Kind::Name: {
      const Value* v = scope->lookup(e.name);
      return v ? *v : Value::undefined(e.name);
    }
    case Expr::Kind::List:
    case Expr::Kind::Tuple: {
      List items;
      for (const auto& i : e.items) items.push_back(eval(*i, scope));
      return e.kind == Expr::Kind::Tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
    }
    case Expr::Kind::Dict: {
      Value d = Value::dict();
      for (size_t i = 0; i < e.items.size(); ++i) {
        Value k = eval(*e.keys[i], scope);
        if (!k.is_string()) fail_at(e.keys[i]->pos, "dict keys must be strings, not " + k.type_name());
        d.set(k.as_string(), eval(*e.items[i], scope));
      }
      return d;
    }
    case Expr::Kind::Attr: return eval_attr(e, scope);
    case Expr::Kind::Index: return eval_index(e, scope);
    case Expr::Kind::Slice: return eval_slice(e, scope);
    case Expr::Kind::Call: return eval_call(e, scope);
    case Expr::Kind::Filter: return eval_filter(e, scope);
    case Expr::Kind::Test: return eval_test(e, scope);
    case Expr::Kind::Unary: {
      Value v = eval(*e.a, scope);
      if (e.name == "not") return Value(!v.truthy());
      if (v.is_int()) return Value(e.name == "-" ? -v.as_int() : v.as_int());
      if (v.is_float() || v.is_bool()) return Value(e.name == "-" ? -v.as_double() : v.as_double());
      fail_at(e.pos, "bad operand type for unary " + e.name + ": '" + v.type_name() + "'");
    }
    case Expr::Kind::Binary: return eval_binary(e, scope);
    case Expr::Kind::Conditional:
      if (eval(*e.a, scope).truthy()) return eval(*e.b, scope);
      return e.c ? eval(*e.c, scope) : Value::undefined();
  }
  return Value::undefined();
}

Value Evaluator::eval_attr(const Expr& e, const ScopePtr& scope) {
  Value obj = eval(*e.a, scope);
  if (obj.is_undefined()) fail_at(e.pos, describe_undefined(obj) + " (reading attribute '" + e.name + "')");
  if (obj.is_dict()) {
    if (!obj.is_namespace()) {
      Value m = method(obj, e.name);
      if (!m.is_undefined()) return m;
    }
    const Value* v = obj.find(e.name);
    return v ? *v : Value::undefined(e.name);
  }
  Value m = method(obj, e.name);
  return m.is_undefined() ? Value::undefined(e.name) : m;
}

Value Evaluator::eval_index(const Expr& e, const ScopePtr& scope) {
  Value obj = eval(*e.a, scope);
  Value key = eval(*e.b, scope);
  if (obj.is_undefined()) fail_at(e.pos, describe_undefined(obj) + " (reading item " + key.repr() + ")");
  if (obj.is_dict()) {
    if (key.is_string()) {
      const Value* v = obj.find(key.as_string());
      return v ? *v : Value::undefined(key.as_string());
    }
    return Value::undefined();
  }
  if ((obj.is_list() || obj.is_string()) && (key.is_int() || key.is_bool()))
    return item_at(obj, key.is_bool() ? key.as_bool() : key.as_int());
  if (key.is_string()) {
    Value m = method(obj, key.as_string());
    return m.is_undefined() ? Value::undefined(key.as_string()) : m;
  }
  return Value::undefined();
}

Value Evaluator::eval_slice(const Expr& e, const ScopePtr& scope) {
  Value obj = eval(*e.a, scope);
  auto bound = [&](const ExprPtr& x, const char* what) -> std::optional<int64_t> {
    if (!x) return std::nullopt;
    Value v = eval(*x, scope);
    if (v.is_none()) return std::nullopt;
    if (!v.is_int()) fail_at(x->pos, std::string("slice ") + what + " must be an integer, not " + v.type_name());
    return v.as_int();
  };
  std::optional<int64_t> start = bound(e.b, "start"), stop = bound(e.c, "stop"), step_v = bound(e.d, "step");
  const int64_t step = step_v.value_or(1);
  if (step == 0) fail_at(e.pos, "slice step cannot be zero");
  List seq;
  if (obj.is_list()) {
    seq = obj.as_list();
  } else if (obj.is_string()) {
    for (auto& c : code_points(obj.as_string())) seq.emplace_back(std::move(c));
  } else if (obj.is_undefined()) {
    fail_at(e.pos, describe_undefined(obj) + " (slicing)");
  } else {
    fail_at(e.pos, "'" + obj.type_name() + "' object is not subscriptable");
  }
  // Python's slice.indices().
  const int64_t n = static_cast<int64_t>(seq.size());
  auto clamp = [&](std::optional<int64_t> v, int64_t dflt) {
    if (!v) return dflt;
    int64_t x = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<int64_t>(x, 0, n);
    return std::clamp<int64_t>(x, -1, n - 1);
  };
  const int64_t lo = clamp(start, step > 0 ? 0 : n - 1), hi = clamp(stop, step > 0 ? n : -1);
  List out;
  for (int64_t i = lo; step > 0 ? i < hi : i > hi; i += step) out.push_back(seq[static_cast<size_t>(i)]);
  if (obj.is_list()) return Value::list(std::move(out));
  std::string s;
  for (const auto& c : out) s += c.as_string();
  return Value(s);
}

CallArgs Evaluator::eval_args(const Expr& e, const ScopePtr& scope) {
  CallArgs args;
  for (const auto& a : e.args) args.positional.push_back(eval(*a, scope));
  for (const auto& k : e.kwargs) args.keyword.emplace_back(k.name, eval(*k.value, scope));
  return args;
}

Value Evaluator::eval_call(const Expr& e, const ScopePtr& scope) {
  Value fn = eval(*e.a, scope);
  if (!fn.is_function()) {
    std::string what = e.a->kind == Expr::Kind::Name || e.a->kind == Expr::Kind::Attr ? "'" + e.a->name + "'" : "value";
    if (fn.is_undefined()) fail_at(e.pos, what + " is undefined (called as a function)");
    fail_at(e.pos, what + " of type '" + fn.type_name() + "' is not callable");
  }
  CallArgs args = eval_args(e, scope);
  try {
    return fn.as_function()(args);
  } catch (const PositionedError&) {
    throw;
  } catch (const Error& err) {
    fail_at(e.pos, err.what());
  }
}

Value Evaluator::eval_filter(const Expr& e, const ScopePtr& scope) {
  Value v = eval(*e.a, scope);
  CallArgs args = eval_args(e, scope);
  try {
    return apply_filter(e.name, v, args);
  } catch (const PositionedError&) {
    throw;
  } catch (const Error& err) {
    fail_at(e.pos, err.what());
  }
}

Value Evaluator::eval_test(const Expr& e, const ScopePtr& scope) {
  Value v = eval(*e.a, scope);
  CallArgs args = eval_args(e, scope);
  try {
    return Value(apply_test(e.name, v, args) != e.negated);
  } catch (const PositionedError&) {
    throw;
  } catch (const Error& err) {
    fail_at(e.pos, err.what());
  }
}

Value Evaluator::eval_binary(const Expr& e, const ScopePtr& scope) {
  // and/or short-circuit and return an operand, as in Python.
  if (e.name == "and") {
    Value a = eval(*e.a, scope);
    return a.truthy() ? eval(*e.b, scope) : a;
  }
  if (e.name == "or") {
    Value a = eval(*e.a, scope);
    return a.truthy() ? a : eval(*e.b, scope);
  }
  Value a = eval(*e.a, scope);
  Value b = eval(*e.b, scope);
  try {
    return binary_op(e.name, a, b);
  } catch (const Error& err) {
    fail_at(e.pos, err.what());
  }
}

}  // namespace seer::tmpl
