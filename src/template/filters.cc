// Jinja's built-in filters, as chat templates use them.
#include "template/filters.h"

#include <algorithm>
#include <cmath>

#include "common/error.h"
#include "template/operators.h"
#include "template/text_util.h"

namespace seer::tmpl {

namespace {

bool flag(const CallArgs& a, size_t i, const char* name, bool dflt) {
  const Value* v = a.get(i, name);
  return v ? v->truthy() : dflt;
}

std::string text(const CallArgs& a, size_t i, const char* name, const std::string& dflt) {
  const Value* v = a.get(i, name);
  return v && !v->is_undefined() ? v->str() : dflt;
}

// Jinja's environment.getattr for "a.b.0" paths: dict keys, list indexes.
Value attribute_path(const Value& v, const std::string& path) {
  Value cur = v;
  size_t i = 0;
  while (i <= path.size()) {
    size_t dot = path.find('.', i);
    std::string part = path.substr(i, dot == std::string::npos ? std::string::npos : dot - i);
    if (cur.is_dict()) {
      const Value* x = cur.find(part);
      cur = x ? *x : Value::undefined(part);
    } else if (cur.is_list() && !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit)) {
      size_t k = std::stoul(part);
      cur = k < cur.as_list().size() ? cur.as_list()[k] : Value::undefined(part);
    } else {
      return Value::undefined(part);
    }
    if (dot == std::string::npos) break;
    i = dot + 1;
  }
  return cur;
}

List as_list(const Value& v) { return iterate(v); }

// Sort key: lowercased strings unless case-sensitive.
Value sort_key(const Value& v, bool case_sensitive) {
  return !case_sensitive && v.is_string() ? Value(lower(v.as_string())) : v;
}

// select/reject/selectattr/rejectattr share this: keep items whose (attribute's)
// test result equals `keep`.
Value filter_items(const Value& v, const CallArgs& a, bool by_attr, bool keep) {
  List out;
  size_t test_at = by_attr ? 1 : 0;
  std::string attr;
  if (by_attr) {
    const Value* at = a.get(0, "attribute");
    if (!at || !at->is_string()) fail("selectattr/rejectattr need an attribute name");
    attr = at->as_string();
  }
  const Value* test = a.get(test_at, nullptr);
  CallArgs targs;
  for (size_t k = test_at + 1; k < a.positional.size(); ++k) targs.positional.push_back(a.positional[k]);
  for (const Value& item : as_list(v)) {
    Value x = by_attr ? attribute_path(item, attr) : item;
    bool r = test ? apply_test(test->str(), x, targs) : x.truthy();
    if (r == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value map_items(const Value& v, const CallArgs& a) {
  List out;
  if (const Value* at = a.get(SIZE_MAX, "attribute")) {
    const Value* dflt = a.get(SIZE_MAX, "default");
    for (const Value& item : as_list(v)) {
      Value x = attribute_path(item, at->str());
      out.push_back(x.is_undefined() && dflt ? *dflt : x);
    }
    return Value::list(std::move(out));
  }
  if (a.positional.empty()) fail("map() needs a filter name or attribute=");
  CallArgs fargs;
  fargs.positional.assign(a.positional.begin() + 1, a.positional.end());
  fargs.keyword = a.keyword;
  for (const Value& item : as_list(v)) out.push_back(apply_filter(a.positional[0].str(), item, fargs));
  return Value::list(std::move(out));
}

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string indent_text(const std::string& s, const CallArgs& a) {
  const Value* w = a.get(0, "width");
  std::string pad = !w ? "    " : w->is_string() ? w->as_string() : std::string(static_cast<size_t>(std::max<int64_t>(0, w->as_int())), ' ');
  const bool first = flag(a, 1, "first", false), blank = flag(a, 2, "blank", false);
  std::string out;
  size_t i = 0;
  bool line_one = true;
  while (i <= s.size()) {
    size_t nl = s.find('\n', i);
    std::string line = s.substr(i, nl == std::string::npos ? std::string::npos : nl - i);
    if ((line_one ? first : true) && (blank || !line.empty())) out += pad;
    out += line;
    if (nl == std::string::npos) break;
    out += '\n';
    i = nl + 1;
    line_one = false;
  }
  return out;
}

Value round_value(const Value& v, const CallArgs& a) {
  const Value* p = a.get(0, "precision");
  const int64_t precision = p ? p->as_int() : 0;
  const std::string method = text(a, 1, "method", "common");
  const double scale = std::pow(10.0, static_cast<double>(precision));
  double x = v.as_double() * scale;
  if (method == "common") x = std::nearbyint(x);  // Python's round: halves to even
  else if (method == "floor") x = std::floor(x);
  else if (method == "ceil") x = std::ceil(x);
  else fail("round() method must be common, ceil or floor");
  return Value(x / scale);
}

Value sorted(const Value& v, const CallArgs& a) {
  List items = as_list(v);
  const bool reverse = flag(a, 0, "reverse", false), cs = flag(a, 1, "case_sensitive", false);
  const Value* attr = a.get(2, "attribute");
  std::stable_sort(items.begin(), items.end(), [&](const Value& x, const Value& y) {
    Value kx = attr ? attribute_path(x, attr->str()) : x, ky = attr ? attribute_path(y, attr->str()) : y;
    return reverse ? less(sort_key(ky, cs), sort_key(kx, cs)) : less(sort_key(kx, cs), sort_key(ky, cs));
  });
  return Value::list(std::move(items));
}

Value to_int(const Value& v, const CallArgs& a) {
  const Value* d = a.get(0, "default");
  const Value dflt = d ? *d : Value(int64_t{0});
  if (v.is_int()) return v;
  if (v.is_bool()) return Value(static_cast<int64_t>(v.as_bool()));
  if (v.is_float()) return Value(static_cast<int64_t>(v.as_double()));
  if (v.is_string()) {
    try {
      size_t used = 0;
      std::string s = strip(v.as_string(), "", true, true);
      int64_t i = std::stoll(s, &used);
      if (used == s.size()) return Value(i);
      double f = std::stod(s, &used);
      if (used == s.size()) return Value(static_cast<int64_t>(f));
    } catch (const std::exception&) {
    }
  }
  return dflt;
}

Value to_float(const Value& v, const CallArgs& a) {
  const Value* d = a.get(0, "default");
  if (v.is_number() || v.is_bool()) return Value(v.as_double());
  if (v.is_string()) {
    try {
      size_t used = 0;
      std::string s = strip(v.as_string(), "", true, true);
      double f = std::stod(s, &used);
      if (used == s.size()) return Value(f);
    } catch (const std::exception&) {
    }
  }
  return d ? *d : Value(0.0);
}

Value min_max(const Value& v, bool max) {
  List items = as_list(v);
  if (items.empty()) return Value::undefined();
  Value best = items[0];
  for (const Value& x : items)
    if (max ? less(sort_key(best, false), sort_key(x, false)) : less(sort_key(x, false), sort_key(best, false))) best = x;
  return best;
}

}  // namespace

Value apply_filter(const std::string& name, const Value& v, const CallArgs& a) {
  if (name == "safe") return v;
  if (name == "default" || name == "d") {
    const Value* d = a.get(0, "default_value");
    const bool boolean = flag(a, 1, "boolean", false);
    if (v.is_undefined() || (boolean && !v.truthy())) return d ? *d : Value("");
    return v;
  }
  if (name == "string") return v.is_string() ? v : Value(v.str());
  if (name == "tojson") {
    const Value* ind = a.get(0, "indent");
    return Value(to_json_text(v, ind && ind->is_int() ? static_cast<int>(ind->as_int()) : -1, flag(a, 1, "sort_keys", false)));
  }
  if (name == "length" || name == "count") return Value(v.length());
  if (name == "list") return Value::list(as_list(v));
  if (name == "int") return to_int(v, a);
  if (name == "float") return to_float(v, a);
  if (name == "abs") {
    if (v.is_int()) return Value(v.as_int() < 0 ? -v.as_int() : v.as_int());
    if (v.is_number() || v.is_bool()) return Value(std::fabs(v.as_double()));
    fail("bad operand type for abs(): '{}'", v.type_name());
  }
  if (name == "round") return round_value(v, a);
  if (name == "first" || name == "last") {
    List items = as_list(v);
    if (items.empty()) return Value::undefined(name);
    return name == "first" ? items.front() : items.back();
  }
  if (name == "items") {
    if (v.is_undefined()) return Value::list();
    if (!v.is_dict()) fail("items() needs a mapping, not {}", v.type_name());
    List out;
    for (const auto& [k, x] : v.as_dict()) out.push_back(Value::tuple({Value(k), x}));
    return Value::list(std::move(out));
  }
  if (name == "join") {
    const std::string sep = text(a, 0, "d", "");
    const Value* attr = a.get(1, "attribute");
    std::string out;
    List items = as_list(v);
    for (size_t i = 0; i < items.size(); ++i)
      out += (i ? sep : "") + (attr ? attribute_path(items[i], attr->str()) : items[i]).str();
    return Value(out);
  }
  if (name == "selectattr" || name == "rejectattr") return filter_items(v, a, true, name == "selectattr");
  if (name == "select" || name == "reject") return filter_items(v, a, false, name == "select");
  if (name == "map") return map_items(v, a);
  if (name == "unique") {
    const bool cs = flag(a, 0, "case_sensitive", false);
    List out, keys;
    for (const Value& x : as_list(v)) {
      Value k = sort_key(x, cs);
      if (std::none_of(keys.begin(), keys.end(), [&](const Value& y) { return equal(y, k); }))
        keys.push_back(k), out.push_back(x);
    }
    return Value::list(std::move(out));
  }
  if (name == "dictsort") {
    if (!v.is_dict()) fail("dictsort() needs a mapping, not {}", v.type_name());
    const bool cs = flag(a, 0, "case_sensitive", false), by_value = text(a, 1, "by", "key") == "value";
    const bool reverse = flag(a, 2, "reverse", false);
    Dict d = v.as_dict();
    std::stable_sort(d.begin(), d.end(), [&](const auto& x, const auto& y) {
      Value kx = by_value ? x.second : Value(x.first), ky = by_value ? y.second : Value(y.first);
      return reverse ? less(sort_key(ky, cs), sort_key(kx, cs)) : less(sort_key(kx, cs), sort_key(ky, cs));
    });
    List out;
    for (auto& [k, x] : d) out.push_back(Value::tuple({Value(k), x}));
    return Value::list(std::move(out));
  }
  if (name == "sort") return sorted(v, a);
  if (name == "reverse") {
    if (v.is_string()) {
      auto cps = code_points(v.as_string());
      std::string out;
      for (auto it = cps.rbegin(); it != cps.rend(); ++it) out += *it;
      return Value(out);
    }
    List items = as_list(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "sum") {
    Value total = a.get(1, "start") ? *a.get(1, "start") : Value(int64_t{0});
    const Value* attr = a.get(0, "attribute");
    for (const Value& x : as_list(v)) total = binary_op("+", total, attr ? attribute_path(x, attr->str()) : x);
    return total;
  }
  if (name == "min" || name == "max") return min_max(v, name == "max");
  if (name == "attr") return attribute_path(v, text(a, 0, "name", ""));
  if (name == "wordcount") return Value(static_cast<int64_t>(split(v.str(), "").size()));
  // String filters take str(v).
  const std::string s = v.str();
  if (name == "trim") return Value(strip(s, text(a, 0, "chars", ""), true, true));
  if (name == "upper") return Value(upper(s));
  if (name == "lower") return Value(lower(s));
  if (name == "capitalize") return Value(capitalize(s));
  if (name == "title") return Value(title(s));
  if (name == "replace") {
    const Value* c = a.get(2, "count");
    return Value(replace(s, text(a, 0, "old", ""), text(a, 1, "new", ""), c && c->is_int() ? c->as_int() : -1));
  }
  if (name == "indent") return Value(indent_text(s, a));
  if (name == "e" || name == "escape") return Value(html_escape(s));
  fail("no filter named '{}'", name);
}

}  // namespace seer::tmpl
