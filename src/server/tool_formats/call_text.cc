#include "server/tool_formats/call_text.h"

#include <cctype>
#include <cstring>

#include <nlohmann/json.hpp>

namespace seer::server {

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  return i;
}

std::string trim_space(std::string_view s) {
  const size_t b = s.find_first_not_of(" \t\r\n"), e = s.find_last_not_of(" \t\r\n");
  return b == std::string_view::npos ? "" : std::string(s.substr(b, e - b + 1));
}

Match match_at(std::string_view s, size_t i, std::string_view lit) {
  if (i > s.size()) return Match::Partial;
  std::string_view rest = s.substr(i);
  if (rest.size() >= lit.size()) return rest.substr(0, lit.size()) == lit ? Match::Yes : Match::No;
  return lit.substr(0, rest.size()) == rest ? Match::Partial : Match::No;
}

size_t json_value_end(std::string_view s, size_t i) {
  if (i >= s.size()) return kNotYet;
  if (s[i] != '{' && s[i] != '[' && s[i] != '"') {
    while (i < s.size() && (std::isalnum(static_cast<unsigned char>(s[i])) || std::strchr("+-.", s[i]))) ++i;
    return i < s.size() ? i : kNotYet;
  }
  int depth = 0;
  bool in_string = false, escaped = false;
  for (; i < s.size(); ++i) {
    const char c = s[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"' && (in_string = false, depth == 0)) return i + 1;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') ++depth;
    else if ((c == '}' || c == ']') && --depth == 0) return i + 1;
  }
  return kNotYet;
}

std::string model_json_text(const nlohmann::ordered_json& v) {
  return v.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
}

const ToolFunction* find_tool(const std::vector<ToolFunction>& tools, std::string_view name) {
  for (const ToolFunction& t : tools)
    if (t.name == name) return &t;
  return nullptr;
}

namespace {

std::optional<nlohmann::json> parse_span(std::string_view s) {
  nlohmann::json j = nlohmann::json::parse(s, nullptr, false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

size_t scan_json_call_object(std::string_view s, size_t i, const std::vector<ToolFunction>& tools, ScannedCall* call,
                             bool* bad) {
  ++i;  // past '{'
  for (;;) {
    i = skip_space(s, i);
    if (i >= s.size()) return kNotYet;
    if (s[i] == '}') return call->name.empty() ? (*bad = true, kNotYet) : (call->complete = true, i + 1);
    if (s[i] != '"') return *bad = true, kNotYet;
    const size_t key_end = json_value_end(s, i);
    if (key_end == kNotYet) return kNotYet;
    auto key = parse_span(s.substr(i, key_end - i));
    i = skip_space(s, key_end);
    if (i >= s.size()) return kNotYet;
    if (!key || s[i] != ':') return *bad = true, kNotYet;
    i = skip_space(s, i + 1);
    if (i >= s.size()) return kNotYet;
    const size_t end = json_value_end(s, i);
    const bool args = *key == "arguments" || *key == "parameters";
    if (args && s[i] == '{') call->arguments = std::string(s.substr(i, end == kNotYet ? kNotYet : end - i));
    if (end == kNotYet) return kNotYet;
    auto value = parse_span(s.substr(i, end - i));
    if (!value) return *bad = true, kNotYet;
    if (*key == "name") {
      if (!value->is_string() || !find_tool(tools, value->get<std::string>())) return *bad = true, kNotYet;
      call->name = value->get<std::string>();
    } else if (args && value->is_string()) {
      call->arguments = value->get<std::string>();  // arguments as a JSON string: settled only when whole
    } else if (args && !value->is_object()) {
      return *bad = true, kNotYet;
    }
    i = skip_space(s, end);
    if (i >= s.size()) return kNotYet;
    if (s[i] == ',') ++i;
    else if (s[i] != '}') return *bad = true, kNotYet;
  }
}

CallScan scan_json_call_list(std::string_view region, std::string_view marker, std::string_view close,
                             const std::vector<ToolFunction>& tools) {
  CallScan scan;
  size_t i = skip_space(region, 0);
  // The marker may be missing: a tokenizer that decodes it as a control token to no
  // text leaves the bare list, which then opens the reply.
  if (Match m = match_at(region, i, marker); m == Match::Partial) return scan;
  else if (m == Match::Yes) i = skip_space(region, i + marker.size());
  if (i >= region.size()) return scan;
  if (region[i] != '[') return scan.malformed = true, scan;
  for (++i;;) {
    i = skip_space(region, i);
    if (i >= region.size()) return scan;
    if (region[i] != '{') return scan.malformed = true, scan;
    scan.calls.emplace_back();
    bool bad = false;
    i = scan_json_call_object(region, i, tools, &scan.calls.back(), &bad);
    if (bad) return scan.malformed = true, scan;
    if (i == kNotYet) return scan;
    i = skip_space(region, i);
    if (i >= region.size()) return scan;
    if (region[i] == ',') {
      ++i;
      continue;
    }
    if (region[i] != ']') return scan.malformed = true, scan;
    i = skip_space(region, i + 1);
    if (!close.empty() && match_at(region, i, close) == Match::No) return scan.malformed = true, scan;
    return scan;
  }
}

}  // namespace seer::server
