#include "template/value.h"

#include <charconv>
#include <cmath>

#include "common/error.h"

namespace seer::tmpl {

const Value* CallArgs::get(size_t i, const char* name) const {
  if (i < positional.size()) return &positional[i];
  if (name)
    for (const auto& [k, v] : keyword)
      if (k == name) return &v;
  return nullptr;
}

Value Value::undefined(std::string name) {
  Value v;
  v.s_ = std::make_shared<const std::string>(std::move(name));
  return v;
}
Value Value::none() {
  Value v;
  v.kind_ = Kind::None;
  return v;
}
Value::Value(bool b) : kind_(Kind::Bool), b_(b) {}
Value::Value(int64_t i) : kind_(Kind::Int), i_(i) {}
Value::Value(double d) : kind_(Kind::Float), d_(d) {}
Value::Value(std::string s) : kind_(Kind::String), s_(std::make_shared<const std::string>(std::move(s))) {}

Value Value::list(List items) {
  Value v;
  v.kind_ = Kind::List;
  v.list_ = std::make_shared<List>(std::move(items));
  return v;
}
Value Value::dict(Dict items) {
  Value v;
  v.kind_ = Kind::Dict;
  v.dict_ = std::make_shared<Dict>(std::move(items));
  return v;
}
Value Value::namespace_(Dict items) {
  Value v = dict(std::move(items));
  v.namespace_flag_ = true;
  return v;
}
Value Value::tuple(List items) {
  Value v = list(std::move(items));
  v.namespace_flag_ = true;
  return v;
}
Value Value::function(Function f) {
  Value v;
  v.kind_ = Kind::Function;
  v.fn_ = std::make_shared<Function>(std::move(f));
  return v;
}

const std::string& Value::undefined_name() const {
  static const std::string empty;
  return s_ ? *s_ : empty;
}

Value Value::from_json(const nlohmann::ordered_json& j, int depth) {
  if (j.is_structured() && depth >= kMaxValueDepth)
    fail("a chat template's data nests deeper than {} levels (the template value depth limit)", kMaxValueDepth);
  switch (j.type()) {
    case nlohmann::json::value_t::null: return none();
    case nlohmann::json::value_t::boolean: return Value(j.get<bool>());
    case nlohmann::json::value_t::number_integer: return Value(j.get<int64_t>());
    case nlohmann::json::value_t::number_unsigned: return Value(static_cast<int64_t>(j.get<uint64_t>()));
    case nlohmann::json::value_t::number_float: return Value(j.get<double>());
    case nlohmann::json::value_t::string: return Value(j.get<std::string>());
    case nlohmann::json::value_t::array: {
      List l;
      for (const auto& e : j) l.push_back(from_json(e, depth + 1));
      return list(std::move(l));
    }
    case nlohmann::json::value_t::object: {
      Dict d;
      for (const auto& [k, e] : j.items()) d.emplace_back(k, from_json(e, depth + 1));
      return dict(std::move(d));
    }
    default: fail("a chat template cannot read JSON of type {}", j.type_name());
  }
}

nlohmann::ordered_json Value::to_json() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return nullptr;
    case Kind::Bool: return b_;
    case Kind::Int: return i_;
    case Kind::Float: return d_;
    case Kind::String: return *s_;
    case Kind::List: {
      auto a = nlohmann::ordered_json::array();
      for (const auto& e : *list_) a.push_back(e.to_json());
      return a;
    }
    case Kind::Dict: {
      auto o = nlohmann::ordered_json::object();
      for (const auto& [k, e] : *dict_) o[k] = e.to_json();
      return o;
    }
    case Kind::Function: fail("a function cannot be converted to JSON");
  }
  return nullptr;
}

bool Value::truthy() const {
  switch (kind_) {
    case Kind::Undefined:
    case Kind::None: return false;
    case Kind::Bool: return b_;
    case Kind::Int: return i_ != 0;
    case Kind::Float: return d_ != 0;
    case Kind::String: return !s_->empty();
    case Kind::List: return !list_->empty();
    case Kind::Dict: return !dict_->empty();
    case Kind::Function: return true;
  }
  return false;
}

std::string float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  char buf[64];
  auto r = std::to_chars(buf, buf + sizeof buf, d);
  std::string s(buf, r.ptr);
  // to_chars gives the shortest digits; Python writes a decimal point or exponent
  // always, and switches to exponent notation from 1e16 and below 1e-4.
  const double a = std::fabs(d);
  if (a != 0 && (a >= 1e16 || a < 1e-4)) {
    r = std::to_chars(buf, buf + sizeof buf, d, std::chars_format::scientific);
    s.assign(buf, r.ptr);
    auto e = s.find('e');
    std::string mant = s.substr(0, e), exp = s.substr(e + 1);
    char sign = exp[0] == '-' ? '-' : '+';
    if (exp[0] == '-' || exp[0] == '+') exp = exp.substr(1);
    while (exp.size() > 2 && exp[0] == '0') exp = exp.substr(1);
    return mant + "e" + sign + exp;
  }
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

namespace {

std::string quote(const std::string& s) {
  // Python picks single quotes unless the text holds ' and no ".
  const char q = s.find('\'') != std::string::npos && s.find('"') == std::string::npos ? '"' : '\'';
  std::string out(1, q);
  for (char c : s) {
    if (c == q || c == '\\') out += '\\', out += c;
    else if (c == '\n') out += "\\n";
    else if (c == '\t') out += "\\t";
    else if (c == '\r') out += "\\r";
    else out += c;
  }
  return out + q;
}

}  // namespace

std::string Value::str() const {
  switch (kind_) {
    case Kind::Undefined: return "";
    case Kind::None: return "None";
    case Kind::Bool: return b_ ? "True" : "False";
    case Kind::Int: return std::to_string(i_);
    case Kind::Float: return float_repr(d_);
    case Kind::String: return *s_;
    default: return repr();
  }
}

std::string Value::repr() const {
  // A list that holds itself (xs.append(xs)) must not recurse without end.
  thread_local int depth = 0;
  struct Guard {
    Guard() {
      if (++depth > 100) {
        depth = 0;
        fail("a value nests deeper than 100 levels");
      }
    }
    ~Guard() { depth = depth > 0 ? depth - 1 : 0; }
  } guard;
  switch (kind_) {
    case Kind::String: return quote(*s_);
    case Kind::List: {
      std::string out = namespace_flag_ ? "(" : "[";
      for (size_t i = 0; i < list_->size(); ++i) out += (i ? ", " : "") + (*list_)[i].repr();
      if (namespace_flag_ && list_->size() == 1) out += ",";
      return out + (namespace_flag_ ? ")" : "]");
    }
    case Kind::Dict: {
      std::string out = namespace_flag_ ? "<Namespace {" : "{";
      for (size_t i = 0; i < dict_->size(); ++i)
        out += (i ? ", " : "") + quote((*dict_)[i].first) + ": " + (*dict_)[i].second.repr();
      return out + (namespace_flag_ ? "}>" : "}");
    }
    case Kind::Function: return "<function>";
    default: return str();
  }
}

std::string Value::type_name() const {
  switch (kind_) {
    case Kind::Undefined: return "undefined";
    case Kind::None: return "NoneType";
    case Kind::Bool: return "bool";
    case Kind::Int: return "int";
    case Kind::Float: return "float";
    case Kind::String: return "str";
    case Kind::List: return namespace_flag_ ? "tuple" : "list";
    case Kind::Dict: return namespace_flag_ ? "Namespace" : "dict";
    case Kind::Function: return "function";
  }
  return "?";
}

const Value* Value::find(const std::string& key) const {
  if (kind_ != Kind::Dict) return nullptr;
  for (const auto& [k, v] : *dict_)
    if (k == key) return &v;
  return nullptr;
}

void Value::set(const std::string& key, Value v) const {
  for (auto& [k, e] : *dict_)
    if (k == key) {
      e = std::move(v);
      return;
    }
  dict_->emplace_back(key, std::move(v));
}

std::vector<std::string> code_points(const std::string& s) {
  std::vector<std::string> out;
  for (size_t i = 0; i < s.size();) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 1;
    n = std::min(n, s.size() - i);
    out.push_back(s.substr(i, n));
    i += n;
  }
  return out;
}

int64_t Value::length() const {
  switch (kind_) {
    case Kind::String: return static_cast<int64_t>(code_points(*s_).size());
    case Kind::List: return static_cast<int64_t>(list_->size());
    case Kind::Dict: return static_cast<int64_t>(dict_->size());
    case Kind::Undefined: return 0;
    default: fail("object of type '{}' has no len()", type_name());
  }
}

bool equal(const Value& a, const Value& b) {
  using K = Value::Kind;
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    if (a.is_int() && b.is_int()) return a.as_int() == b.as_int();
    return a.as_double() == b.as_double();
  }
  if (a.kind() != b.kind()) return false;
  switch (a.kind()) {
    case K::Undefined:
    case K::None: return true;
    case K::String: return a.as_string() == b.as_string();
    case K::List: {
      if (a.as_list().size() != b.as_list().size()) return false;
      for (size_t i = 0; i < a.as_list().size(); ++i)
        if (!equal(a.as_list()[i], b.as_list()[i])) return false;
      return true;
    }
    case K::Dict: {
      if (a.as_dict().size() != b.as_dict().size()) return false;
      for (const auto& [k, v] : a.as_dict()) {
        const Value* o = b.find(k);
        if (!o || !equal(v, *o)) return false;
      }
      return true;
    }
    default: return false;
  }
}

bool less(const Value& a, const Value& b) {
  if ((a.is_number() || a.is_bool()) && (b.is_number() || b.is_bool())) {
    if (a.is_int() && b.is_int()) return a.as_int() < b.as_int();
    return a.as_double() < b.as_double();
  }
  if (a.is_string() && b.is_string()) return a.as_string() < b.as_string();
  if (a.is_list() && b.is_list()) {
    const List &x = a.as_list(), &y = b.as_list();
    for (size_t i = 0; i < x.size() && i < y.size(); ++i) {
      if (less(x[i], y[i])) return true;
      if (less(y[i], x[i])) return false;
    }
    return x.size() < y.size();
  }
  fail("'<' not supported between instances of '{}' and '{}'", a.type_name(), b.type_name());
}

}  // namespace seer::tmpl
