#include "grammar/code_point_set.h"

#include <algorithm>

#include <fmt/format.h>

namespace seer::grammar {

CodePointSet normalized(CodePointSet s) {
  std::sort(s.begin(), s.end(), [](const CodeRange& a, const CodeRange& b) { return a.lo < b.lo; });
  CodePointSet out;
  for (const CodeRange& r : s) {
    if (!out.empty() && r.lo <= out.back().hi + 1) out.back().hi = std::max(out.back().hi, r.hi);
    else out.push_back(r);
  }
  return out;
}

CodePointSet complement(const CodePointSet& s) {
  CodePointSet out;
  uint32_t next = 0;
  for (const CodeRange& r : normalized(s)) {
    if (r.lo > next) out.push_back({next, r.lo - 1});
    next = r.hi + 1;
  }
  if (next <= 0x10FFFF) out.push_back({next, 0x10FFFF});
  CodePointSet no_surrogates;
  for (const CodeRange& r : out) {
    if (r.lo < 0xD800) no_surrogates.push_back({r.lo, std::min(r.hi, 0xD7FFu)});
    if (r.hi > 0xDFFF) no_surrogates.push_back({std::max(r.lo, 0xE000u), r.hi});
  }
  return no_surrogates;
}

CodePointSet united(CodePointSet a, const CodePointSet& b) {
  a.insert(a.end(), b.begin(), b.end());
  return normalized(std::move(a));
}

bool contains(const CodePointSet& s, uint32_t cp) {
  return std::any_of(s.begin(), s.end(), [&](const CodeRange& r) { return r.lo <= cp && cp <= r.hi; });
}

namespace {

std::string class_char(uint32_t cp) {
  if (cp < 0x80 && std::isalnum(static_cast<int>(cp))) return std::string(1, static_cast<char>(cp));
  if (cp <= 0xFF) return fmt::format("\\x{:02X}", cp);
  if (cp <= 0xFFFF) return fmt::format("\\u{:04X}", cp);
  return fmt::format("\\U{:08X}", cp);
}

std::string escape_of(uint32_t cp) {
  switch (cp) {
    case '"': return "\"\\\\\\\"\"";
    case '\\': return "\"\\\\\\\\\"";
    case '\b': return "\"\\\\b\"";
    case '\t': return "\"\\\\t\"";
    case '\n': return "\"\\\\n\"";
    case '\f': return "\"\\\\f\"";
    case '\r': return "\"\\\\r\"";
    default: return fmt::format("\"\\\\u{:04x}\"", cp);
  }
}

}  // namespace

std::string json_chars(const CodePointSet& s) {
  std::vector<std::string> alts;
  std::string raw;
  for (const CodeRange& r : normalized(s)) {
    for (uint32_t cp = r.lo; cp <= std::min(r.hi, 0x1Fu); ++cp) alts.push_back(escape_of(cp));
    // The raw part: the range minus control characters, '"' and '\'.
    uint32_t lo = std::max(r.lo, 0x20u);
    for (uint32_t special : {uint32_t{'"'}, uint32_t{'\\'}}) {
      if (lo > r.hi || special < lo || special > r.hi) continue;
      alts.push_back(escape_of(special));
      if (special > lo) raw += class_char(lo) + (special - 1 > lo ? "-" + class_char(special - 1) : "");
      lo = special + 1;
    }
    if (lo <= r.hi) raw += class_char(lo) + (r.hi > lo ? "-" + class_char(r.hi) : "");
  }
  if (!raw.empty()) alts.insert(alts.begin(), "[" + raw + "]");
  std::string out;
  for (const std::string& a : alts) out += (out.empty() ? "" : " | ") + a;
  return alts.size() > 1 ? "( " + out + " )" : out;
}

}  // namespace seer::grammar
