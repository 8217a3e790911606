#include "server/tool_calls.h"

#include <random>

#include "common/error.h"
#include "grammar/json_schema_to_gbnf.h"
#include "server/api_error.h"
#include "server/json_fields.h"
#include "server/tool_formats/call_text.h"
#include "server/tool_formats/registry.h"

namespace seer::server {

using nlohmann::json;
using nlohmann::ordered_json;

namespace {

constexpr std::string_view kHermesOpen = "<tool_call>";
constexpr std::string_view kHermesClose = "</tool_call>";
constexpr std::string_view kMistral = "[TOOL_CALLS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";
constexpr std::string_view kMarkers[] = {kHermesOpen, kMistral, kPythonTag};

bool valid_name(const std::string& n) {
  if (n.empty() || n.size() > 64) return false;
  for (char c : n)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') return false;
  return true;
}

bool known(const std::vector<std::string>& names, const std::string& n) {
  return std::find(names.begin(), names.end(), n) != names.end();
}

// {"name": ..., "arguments" | "parameters": {...} or "..."} -> a call.
std::optional<ToolCall> call_from_json(const json& j, const std::vector<std::string>& names) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return std::nullopt;
  ToolCall c{new_tool_call_id(), j["name"], "{}"};
  if (!known(names, c.name)) return std::nullopt;
  for (const char* k : {"arguments", "parameters"}) {
    if (!j.contains(k)) continue;
    const json& a = j[k];
    if (a.is_string()) c.arguments = a.get<std::string>();
    else if (a.is_object()) c.arguments = a.dump();
    else return std::nullopt;
  }
  return c;
}

// A model's text nested deeper than a request may be is not a call (it would be
// copied and dumped by recursion).
std::optional<json> parse_json(std::string_view s) {
  json j = parse_json_within_depth(s, kMaxJsonDepth);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

// The JSON object at text[i] (after spaces) as a call; *end gets the position past
// it. The object is delimited by its own braces, so a delimiter inside one of its
// strings cannot end it.
std::optional<ToolCall> object_call_at(std::string_view text, size_t i, const std::vector<std::string>& names,
                                       size_t* end) {
  i = skip_space(text, i);
  if (i >= text.size() || text[i] != '{') return std::nullopt;
  *end = json_value_end(text, i);
  if (*end == kNotYet) return std::nullopt;
  auto j = parse_json(text.substr(i, *end - i));
  return j ? call_from_json(*j, names) : std::nullopt;
}

std::optional<std::vector<ToolCall>> parse_hermes(std::string_view text, const std::vector<std::string>& names) {
  std::vector<ToolCall> calls;
  size_t pos = text.find(kHermesOpen);
  while (pos != std::string_view::npos) {
    pos += kHermesOpen.size();
    size_t end = 0;
    std::optional<ToolCall> c = object_call_at(text, pos, names, &end);
    if (!c) {  // not a well-formed object: whatever lies before the closing tag
      end = text.find(kHermesClose, pos);
      auto j = parse_json(trim_space(text.substr(pos, end == std::string_view::npos ? std::string_view::npos : end - pos)));
      c = j ? call_from_json(*j, names) : std::nullopt;
    }
    if (!c) return std::nullopt;
    calls.push_back(std::move(*c));
    if (end == std::string_view::npos) break;
    pos = text.find(kHermesOpen, end);
  }
  return calls;
}

std::optional<std::vector<ToolCall>> parse_mistral(std::string_view rest, const std::vector<std::string>& names) {
  std::vector<ToolCall> calls;
  const std::string body = trim_space(rest);
  if (!body.empty() && body[0] == '[') {  // [{"name": ..., "arguments": ...}, ...]
    auto j = parse_json(body);
    if (!j || !j->is_array() || j->empty()) return std::nullopt;
    for (const json& item : *j) {
      auto c = call_from_json(item, names);
      if (!c) return std::nullopt;
      calls.push_back(std::move(*c));
    }
    return calls;
  }
  // name[ARGS]{...}, repeated with [TOOL_CALLS] between calls.
  const std::string_view s(body);
  for (size_t start = 0; start < s.size();) {
    const size_t args = s.find("[ARGS]", start);
    if (args == std::string_view::npos) return std::nullopt;
    const size_t at = skip_space(s, args + 6);
    const size_t end = json_value_end(s, at);
    if (at >= s.size() || s[at] != '{' || end == kNotYet) return std::nullopt;
    auto a = parse_json(s.substr(at, end - at));
    if (!a) return std::nullopt;
    auto c = call_from_json({{"name", trim_space(s.substr(start, args - start))}, {"arguments", *a}}, names);
    if (!c) return std::nullopt;
    calls.push_back(std::move(*c));
    start = skip_space(s, end);
    if (start < s.size() && match_at(s, start, kMistral) != Match::Yes) return std::nullopt;
    if (start < s.size()) start += kMistral.size();
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

// Llama 3.x: the whole reply is one JSON call, or several separated by ';' or spaces.
std::optional<std::vector<ToolCall>> parse_llama(std::string_view text, const std::vector<std::string>& names) {
  std::vector<ToolCall> calls;
  for (size_t i = skip_space(text, 0); i < text.size();) {
    size_t end = 0;
    auto c = object_call_at(text, i, names, &end);
    if (!c) return std::nullopt;
    calls.push_back(std::move(*c));
    i = skip_space(text, end);
    if (i < text.size() && text[i] == ';') i = skip_space(text, i + 1);
  }
  if (calls.empty()) return std::nullopt;
  return calls;
}

// Where a call begins in `text`, or npos.
size_t call_start(std::string_view text) {
  size_t best = std::string_view::npos;
  for (auto m : kMarkers) best = std::min(best, text.find(m));
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') best = std::min(best, first);
  return best;
}

}  // namespace

std::string new_tool_call_id() {
  static thread_local std::mt19937_64 rng{std::random_device{}()};
  static constexpr char kAlnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::string id = "call_";
  for (int i = 0; i < 24; ++i) id += kAlnum[rng() % (sizeof kAlnum - 1)];
  return id;
}

void read_tools(const ordered_json& body, std::vector<ToolFunction>* tools, ToolChoice* choice, bool* parallel) {
  if (auto it = body.find("tools"); it != body.end() && !it->is_null()) {
    if (!it->is_array()) bad_request("tools", "'tools' must be an array");
    if (it->size() > 128) bad_request("tools", "'tools' holds more than 128 tools");
    for (size_t i = 0; i < it->size(); ++i) {
      const ordered_json& t = (*it)[i];
      const std::string path = fmt::format("tools[{}]", i);
      if (!t.is_object() || t.value("type", "") != "function")
        bad_request(path + ".type", "'{}' must be an object with type \"function\"", path);
      if (!t.contains("function") || !t["function"].is_object())
        bad_request(path + ".function", "'{}.function' must be an object", path);
      const ordered_json& f = t["function"];
      ToolFunction fn;
      if (!f.contains("name") || !f["name"].is_string() || !valid_name(f["name"]))
        bad_request(path + ".function.name", "'{}.function.name' must be 1-64 characters of [A-Za-z0-9_-]", path);
      fn.name = f["name"];
      for (const auto& other : *tools)
        if (other.name == fn.name) bad_request(path + ".function.name", "two tools are named '{}'", fn.name);
      if (f.contains("description") && f["description"].is_string()) fn.description = f["description"];
      if (f.contains("parameters") && !f["parameters"].is_null()) {
        if (!f["parameters"].is_object())
          bad_request(path + ".function.parameters", "'{}.function.parameters' must be a JSON Schema object", path);
        fn.parameters = f["parameters"];
      }
      tools->push_back(std::move(fn));
    }
  }
  if (auto it = body.find("tool_choice"); it != body.end() && !it->is_null()) {
    const ordered_json& c = *it;
    if (c == "none") choice->mode = ToolChoiceMode::None;
    else if (c == "auto") choice->mode = ToolChoiceMode::Auto;
    else if (c == "required") choice->mode = ToolChoiceMode::Required;
    else if (c.is_object() && c.value("type", "") == "function" && c.contains("function") &&
             c["function"].is_object() && c["function"].contains("name") && c["function"]["name"].is_string()) {
      choice->mode = ToolChoiceMode::Named;
      choice->name = c["function"]["name"];
      bool found = false;
      for (const auto& t : *tools) found = found || t.name == choice->name;
      if (!found) bad_request("tool_choice", "'tool_choice' names '{}', which is not in 'tools'", choice->name);
    } else {
      bad_request("tool_choice",
                  "'tool_choice' must be \"none\", \"auto\", \"required\" or {{\"type\": \"function\", \"function\": {{\"name\": ...}}}}");
    }
    if (tools->empty() && choice->mode != ToolChoiceMode::None && choice->mode != ToolChoiceMode::Auto)
      bad_request("tool_choice", "'tool_choice' requires 'tools'");
  }
  if (auto it = body.find("parallel_tool_calls"); it != body.end() && !it->is_null()) {
    if (!it->is_boolean()) bad_request("parallel_tool_calls", "'parallel_tool_calls' must be a boolean");
    *parallel = it->get<bool>();
  }
}

MessageToolInfo read_message_tool_info(const json& msg, const std::string& path, const std::string& role) {
  MessageToolInfo info;
  if (role == "tool") {
    auto it = msg.find("tool_call_id");
    if (it == msg.end() || !it->is_string()) bad_request(path + ".tool_call_id", "'{}.tool_call_id' is required", path);
    info.tool_call_id = *it;
  }
  auto it = msg.find("tool_calls");
  if (role != "assistant" || it == msg.end() || it->is_null()) return info;
  if (!it->is_array()) bad_request(path + ".tool_calls", "'{}.tool_calls' must be an array", path);
  for (size_t i = 0; i < it->size(); ++i) {
    const json& c = (*it)[i];
    const std::string p = fmt::format("{}.tool_calls[{}]", path, i);
    if (!c.is_object() || !c.contains("function") || !c["function"].is_object() || !c["function"].contains("name") ||
        !c["function"]["name"].is_string())
      bad_request(p, "'{}' must be {{\"id\", \"type\": \"function\", \"function\": {{\"name\", \"arguments\"}}}}", p);
    const json& f = c["function"];
    ToolCall call{c.value("id", ""), f["name"], "{}"};
    if (f.contains("arguments")) {
      if (!f["arguments"].is_string()) bad_request(p + ".function.arguments", "'{}.function.arguments' must be a string", p);
      call.arguments = f["arguments"];
      if (json_nesting_depth(call.arguments) > kMaxJsonDepth)
        bad_request(p + ".function.arguments",
                    "'{}.function.arguments' nests arrays/objects deeper than {} levels (the JSON depth limit)", p,
                    kMaxJsonDepth);
    }
    info.tool_calls.push_back(std::move(call));
  }
  return info;
}

std::string tool_call_grammar(const std::vector<ToolFunction>& tools, const ToolChoice& choice, bool parallel,
                              grammar::JsonWhitespace ws) {
  return hermes_tool_format().forced_call_grammar(tools, choice, parallel, ws);
}

std::optional<std::vector<ToolCall>> parse_tool_calls(std::string_view text, const std::vector<std::string>& names,
                                                      std::string* content) {
  const size_t start = call_start(text);
  if (start == std::string_view::npos) return std::nullopt;
  std::string_view rest = text.substr(start);
  std::optional<std::vector<ToolCall>> calls;
  if (rest.substr(0, kHermesOpen.size()) == kHermesOpen) calls = parse_hermes(rest, names);
  else if (rest.substr(0, kMistral.size()) == kMistral) calls = parse_mistral(rest.substr(kMistral.size()), names);
  else if (rest.substr(0, kPythonTag.size()) == kPythonTag) calls = parse_llama(rest.substr(kPythonTag.size()), names);
  else calls = parse_llama(rest, names);
  if (!calls || calls->empty()) return std::nullopt;
  if (content) *content = trim_space(text.substr(0, start));
  return calls;
}

CallOpenings legacy_call_openings() { return {{std::begin(kMarkers), std::end(kMarkers)}, "{"}; }

}  // namespace seer::server
