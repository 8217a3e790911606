#include <algorithm>
#include <cstdio>

#include "common/error.h"
#include "template/filters.h"

namespace seer::tmpl {

namespace {

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          out += buf;
        } else {
          out += ch;  // ensure_ascii=False: UTF-8 passes through
        }
    }
  }
  return out + "\"";
}

void write(const Value& v, int indent, bool sort_keys, int depth, std::string& out) {
  // depth: the lists and dicts around v.
  if ((v.is_list() || v.is_dict()) && depth >= kMaxValueDepth)
    fail("a value nests deeper than {} levels for tojson (the template value depth limit)", kMaxValueDepth);
  const std::string item_sep = indent >= 0 ? "," : ", ";
  const std::string pad = indent >= 0 ? "\n" + std::string(static_cast<size_t>(indent * (depth + 1)), ' ') : "";
  const std::string close_pad = indent >= 0 ? "\n" + std::string(static_cast<size_t>(indent * depth), ' ') : "";
  switch (v.kind()) {
    case Value::Kind::Undefined:
    case Value::Kind::None: out += "null"; return;
    case Value::Kind::Bool: out += v.as_bool() ? "true" : "false"; return;
    case Value::Kind::Int: out += std::to_string(v.as_int()); return;
    case Value::Kind::Float: {
      std::string f = float_repr(v.as_double());
      out += f == "inf" ? "Infinity" : f == "-inf" ? "-Infinity" : f == "nan" ? "NaN" : f;
      return;
    }
    case Value::Kind::String: out += json_string(v.as_string()); return;
    case Value::Kind::List: {
      const List& l = v.as_list();
      if (l.empty()) {
        out += "[]";
        return;
      }
      out += "[";
      for (size_t i = 0; i < l.size(); ++i) {
        if (i) out += item_sep;
        out += pad;
        write(l[i], indent, sort_keys, depth + 1, out);
      }
      out += close_pad + "]";
      return;
    }
    case Value::Kind::Dict: {
      Dict d = v.as_dict();
      if (d.empty()) {
        out += "{}";
        return;
      }
      if (sort_keys) std::stable_sort(d.begin(), d.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
      out += "{";
      for (size_t i = 0; i < d.size(); ++i) {
        if (i) out += item_sep;
        out += pad + json_string(d[i].first) + ": ";
        write(d[i].second, indent, sort_keys, depth + 1, out);
      }
      out += close_pad + "}";
      return;
    }
    case Value::Kind::Function: fail("Object of type function is not JSON serializable");
  }
}

}  // namespace

std::string to_json_text(const Value& v, int indent, bool sort_keys) {
  std::string out;
  write(v, indent, sort_keys, 0, out);
  return out;
}

}  // namespace seer::tmpl
