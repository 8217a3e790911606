#include "template/builtins.h"

#include <ctime>

#include "common/error.h"

namespace seer::tmpl {

namespace {

Value range(const CallArgs& a) {
  std::vector<int64_t> n;
  for (const Value& v : a.positional) {
    if (!v.is_int()) fail("range() takes integers, not {}", v.type_name());
    n.push_back(v.as_int());
  }
  int64_t start = 0, stop = 0, step = 1;
  if (n.size() == 1) stop = n[0];
  else if (n.size() == 2) start = n[0], stop = n[1];
  else if (n.size() == 3) start = n[0], stop = n[1], step = n[2];
  else fail("range() takes 1 to 3 arguments");
  if (step == 0) fail("range() step must not be zero");
  if ((stop - start) / step > 1000000) fail("range() longer than 1000000");
  List out;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) out.emplace_back(i);
  return Value::list(std::move(out));
}

Value make_namespace(const CallArgs& a) {
  Dict d;
  if (const Value* init = a.get(0, nullptr); init && init->is_dict()) d = init->as_dict();
  for (const auto& [k, v] : a.keyword) {
    bool replaced = false;
    for (auto& [dk, dv] : d)
      if (dk == k) dv = v, replaced = true;
    if (!replaced) d.emplace_back(k, v);
  }
  return Value::namespace_(std::move(d));
}

Value make_dict(const CallArgs& a) {
  Value d = Value::dict();
  if (const Value* init = a.get(0, nullptr); init && init->is_dict())
    for (const auto& [k, v] : init->as_dict()) d.set(k, v);
  for (const auto& [k, v] : a.keyword) d.set(k, v);
  return d;
}

// transformers' strftime_now: the local time formatted with strftime.
Value strftime_now(const CallArgs& a, std::time_t now) {
  const Value* f = a.get(0, "format");
  if (!f || !f->is_string()) fail("strftime_now() needs a format string");
  std::tm tm{};
  localtime_r(&now, &tm);
  char buf[256];
  size_t n = std::strftime(buf, sizeof buf, f->as_string().c_str(), &tm);
  return Value(std::string(buf, n));
}

}  // namespace

void add_builtins(Scope& g, std::optional<std::time_t> now) {
  g.vars["range"] = Value::function(range);
  g.vars["namespace"] = Value::function(make_namespace);
  g.vars["dict"] = Value::function(make_dict);
  g.vars["strftime_now"] = Value::function(
      [now](const CallArgs& a) { return strftime_now(a, now ? *now : std::time(nullptr)); });
  g.vars["raise_exception"] = Value::function([](const CallArgs& a) -> Value {
    const Value* m = a.get(0, "message");
    fail("{}", m ? m->str() : "raise_exception() called");
  });
}

}  // namespace seer::tmpl
