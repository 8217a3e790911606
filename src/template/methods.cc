// Methods of str, dict and list values (`s.startswith("x")`, `d.items()`, `l.append(x)`).
#include "common/error.h"
#include "template/filters.h"
#include "template/text_util.h"

namespace seer::tmpl {

namespace {

std::string str_arg(const CallArgs& a, size_t i, const char* name, const std::string& dflt = "") {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_string()) fail("argument '{}' must be a string, not {}", name, v->type_name());
  return v->as_string();
}

int64_t int_arg(const CallArgs& a, size_t i, const char* name, int64_t dflt) {
  const Value* v = a.get(i, name);
  if (!v || v->is_none()) return dflt;
  if (!v->is_int()) fail("argument '{}' must be an integer, not {}", name, v->type_name());
  return v->as_int();
}

bool affix_match(const std::string& s, const Value& arg, bool prefix) {
  auto one = [&](const Value& a) {
    if (!a.is_string()) fail("{}() argument must be str or a tuple of str, not {}", prefix ? "startswith" : "endswith", a.type_name());
    const std::string& p = a.as_string();
    if (p.size() > s.size()) return false;
    return prefix ? s.compare(0, p.size(), p) == 0 : s.compare(s.size() - p.size(), p.size(), p) == 0;
  };
  if (arg.is_list()) {
    for (const auto& a : arg.as_list())
      if (one(a)) return true;
    return false;
  }
  return one(arg);
}

Value string_method(const Value& obj, const std::string& name) {
  const std::string s = obj.as_string();
  auto fn = [](auto f) { return Value::function(f); };
  if (name == "strip" || name == "lstrip" || name == "rstrip")
    return fn([s, name](const CallArgs& a) {
      return Value(strip(s, str_arg(a, 0, "chars"), name != "rstrip", name != "lstrip"));
    });
  if (name == "split")
    return fn([s](const CallArgs& a) {
      List out;
      for (auto& p : split(s, str_arg(a, 0, "sep"), int_arg(a, 1, "maxsplit", -1))) out.emplace_back(std::move(p));
      return Value::list(std::move(out));
    });
  if (name == "startswith" || name == "endswith")
    return fn([s, name](const CallArgs& a) {
      const Value* p = a.get(0, "prefix");
      if (!p) fail("{}() takes at least 1 argument", name);
      return Value(affix_match(s, *p, name == "startswith"));
    });
  if (name == "replace")
    return fn([s](const CallArgs& a) {
      return Value(replace(s, str_arg(a, 0, "old"), str_arg(a, 1, "new"), int_arg(a, 2, "count", -1)));
    });
  if (name == "upper") return fn([s](const CallArgs&) { return Value(upper(s)); });
  if (name == "lower") return fn([s](const CallArgs&) { return Value(lower(s)); });
  if (name == "title") return fn([s](const CallArgs&) { return Value(title(s)); });
  if (name == "capitalize") return fn([s](const CallArgs&) { return Value(capitalize(s)); });
  if (name == "find")
    return fn([s](const CallArgs& a) {
      size_t p = s.find(str_arg(a, 0, "sub"));
      return Value(p == std::string::npos ? int64_t{-1} : static_cast<int64_t>(p));
    });
  if (name == "count")
    return fn([s](const CallArgs& a) {
      std::string sub = str_arg(a, 0, "sub");
      if (sub.empty()) return Value(static_cast<int64_t>(code_points(s).size() + 1));
      int64_t n = 0;
      for (size_t p = s.find(sub); p != std::string::npos; p = s.find(sub, p + sub.size())) ++n;
      return Value(n);
    });
  if (name == "join")
    return fn([s](const CallArgs& a) {
      const Value* l = a.get(0, "iterable");
      if (!l || !l->is_list()) fail("join() needs a list");
      std::string out;
      for (size_t i = 0; i < l->as_list().size(); ++i) out += (i ? s : "") + l->as_list()[i].str();
      return Value(out);
    });
  if (name == "isdigit" || name == "isalpha" || name == "isspace")
    return fn([s, name](const CallArgs&) {
      if (s.empty()) return Value(false);
      for (unsigned char c : s) {
        bool ok = name == "isdigit" ? std::isdigit(c) : name == "isalpha" ? std::isalpha(c) : std::isspace(c);
        if (!ok) return Value(false);
      }
      return Value(true);
    });
  return Value::undefined(name);
}

// Whether `v` is or holds, at any depth, the container at `target`. Putting it into
// that container would make a cycle of shared pointers, which Jinja allows but which
// would never be freed here, so it is an error instead.
bool holds(const Value& v, const void* target) {
  if (v.is_list()) {
    if (&v.as_list() == target) return true;
    for (const Value& x : v.as_list())
      if (holds(x, target)) return true;
  } else if (v.is_dict()) {
    if (&v.as_dict() == target) return true;
    for (const auto& [k, x] : v.as_dict())
      if (holds(x, target)) return true;
  }
  return false;
}

Value dict_method(const Value& obj, const std::string& name) {
  if (name == "get")
    return Value::function([obj](const CallArgs& a) {
      const Value* k = a.get(0, "key");
      if (!k) fail("get() takes at least 1 argument");
      const Value* v = k->is_string() ? obj.find(k->as_string()) : nullptr;
      if (v) return *v;
      const Value* d = a.get(1, "default");
      return d ? *d : Value::none();
    });
  if (name == "items" || name == "keys" || name == "values")
    return Value::function([obj, name](const CallArgs&) {
      List out;
      for (const auto& [k, v] : obj.as_dict()) {
        if (name == "items") out.push_back(Value::tuple({Value(k), v}));
        else if (name == "keys") out.emplace_back(k);
        else out.push_back(v);
      }
      return Value::list(std::move(out));
    });
  if (name == "update")
    return Value::function([obj](const CallArgs& a) {
      const void* self = &obj.as_dict();
      if (const Value* o = a.get(0, nullptr); o && o->is_dict())
        for (const auto& [k, v] : o->as_dict()) {
          if (holds(v, self)) fail("update(): a dict cannot contain itself");
          obj.set(k, v);
        }
      for (const auto& [k, v] : a.keyword) {
        if (holds(v, self)) fail("update(): a dict cannot contain itself");
        obj.set(k, v);
      }
      return Value::none();
    });
  return Value::undefined(name);
}

Value list_method(const Value& obj, const std::string& name) {
  if (name == "append")
    return Value::function([obj](const CallArgs& a) {
      if (a.positional.size() != 1) fail("append() takes exactly one argument");
      if (holds(a.positional[0], &obj.as_list())) fail("append(): a list cannot contain itself");
      obj.as_list().push_back(a.positional[0]);
      return Value::none();
    });
  if (name == "extend")
    return Value::function([obj](const CallArgs& a) {
      if (a.positional.size() != 1 || !a.positional[0].is_list()) fail("extend() takes one list");
      if (holds(a.positional[0], &obj.as_list())) fail("extend(): a list cannot contain itself");
      List add = a.positional[0].as_list();
      obj.as_list().insert(obj.as_list().end(), add.begin(), add.end());
      return Value::none();
    });
  if (name == "pop")
    return Value::function([obj](const CallArgs& a) {
      List& l = obj.as_list();
      if (l.empty()) fail("pop from empty list");
      int64_t i = int_arg(a, 0, "index", -1);
      if (i < 0) i += static_cast<int64_t>(l.size());
      if (i < 0 || i >= static_cast<int64_t>(l.size())) fail("pop index out of range");
      Value v = l[static_cast<size_t>(i)];
      l.erase(l.begin() + i);
      return v;
    });
  if (name == "index")
    return Value::function([obj](const CallArgs& a) {
      const Value* x = a.get(0, "value");
      const List& l = obj.as_list();
      for (size_t i = 0; x && i < l.size(); ++i)
        if (equal(l[i], *x)) return Value(static_cast<int64_t>(i));
      fail("value is not in list");
    });
  if (name == "count")
    return Value::function([obj](const CallArgs& a) {
      const Value* x = a.get(0, "value");
      int64_t n = 0;
      for (const auto& e : obj.as_list()) n += x && equal(e, *x);
      return Value(n);
    });
  return Value::undefined(name);
}

}  // namespace

Value method(const Value& obj, const std::string& name) {
  if (obj.is_string()) return string_method(obj, name);
  if (obj.is_dict()) return dict_method(obj, name);
  if (obj.is_list()) return list_method(obj, name);
  return Value::undefined(name);
}

}  // namespace seer::tmpl
