#pragma once
// For the tool-format tests: each format's canonical rendering of calls (what its
// forcing grammar writes and its template shows), reading a reply back streamed in
// given chunks, and matching text against a GBNF grammar.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "grammar/gbnf_parser.h"
#include "grammar/grammar_matcher.h"
#include "server/tool_call_stream.h"
#include "server/tool_formats/registry.h"

namespace seer::server::testing {

using nlohmann::ordered_json;

struct PlainCall {
  std::string name;
  ordered_json arguments;  // an object
};

// Python literal of a JSON value (strings in JSON's escapes, which Python reads).
inline std::string python_literal(const ordered_json& v) {
  if (v.is_boolean()) return v.get<bool>() ? "True" : "False";
  if (v.is_null()) return "None";
  if (v.is_array()) {
    std::string s = "[";
    for (const auto& x : v) s += (s.size() > 1 ? ", " : "") + python_literal(x);
    return s + "]";
  }
  if (v.is_object()) {
    std::string s = "{";
    for (const auto& [k, x] : v.items()) s += (s.size() > 1 ? ", " : "") + ordered_json(k).dump() + ": " + python_literal(x);
    return s + "}";
  }
  return v.dump();
}

inline std::string json_call(const PlainCall& c, const char* key = "arguments") {
  return "{\"name\": " + ordered_json(c.name).dump() + ", \"" + key + "\": " + c.arguments.dump() + "}";
}

inline std::string json_list(const std::vector<PlainCall>& calls) {
  std::string s = "[";
  for (const auto& c : calls) s += (s.size() > 1 ? ", " : "") + json_call(c);
  return s + "]";
}

// `calls` as `format` writes them (one call for formats that hold only one).
inline std::string render_calls(std::string_view format, const std::vector<PlainCall>& calls) {
  std::string s;
  auto each = [&](const std::string& sep, auto one) {
    for (size_t i = 0; i < calls.size(); ++i) s += (i ? sep : "") + one(calls[i]);
  };
  if (format == "hermes") each("\n", [](const PlainCall& c) { return "<tool_call>\n" + json_call(c) + "\n</tool_call>"; });
  if (format == "llama3_json") each("; ", [](const PlainCall& c) { return json_call(c, "parameters"); });
  if (format == "generic_json") each("\n", [](const PlainCall& c) { return json_call(c); });
  if (format == "mistral") s = "[TOOL_CALLS]" + json_list(calls);
  if (format == "mistral_args") each("", [](const PlainCall& c) { return "[TOOL_CALLS]" + c.name + "[ARGS]" + c.arguments.dump(); });
  if (format == "granite") s = "<|tool_call|>" + json_list(calls);
  if (format == "functools") s = "functools" + json_list(calls);
  if (format == "nemotron") s = "<TOOLCALL>" + json_list(calls) + "</TOOLCALL>";
  if (format == "qwen3_coder")
    each("\n", [](const PlainCall& c) {
      std::string x = "<tool_call>\n<function=" + c.name + ">\n";
      for (const auto& [k, v] : c.arguments.items())
        x += "<parameter=" + k + ">\n" + (v.is_string() ? v.get<std::string>() : v.dump()) + "\n</parameter>\n";
      return x + "</function>\n</tool_call>";
    });
  if (format == "pythonic") {
    s = "[";
    each(", ", [](const PlainCall& c) {
      std::string x = c.name + "(";
      bool first = true;
      for (const auto& [k, v] : c.arguments.items()) x += (first ? "" : ", ") + k + "=" + python_literal(v), first = false;
      return x + ")";
    });
    s += "]";
  }
  if (format == "deepseek_r1") {
    s = "<｜tool▁calls▁begin｜>";
    each("\n", [](const PlainCall& c) {
      return "<｜tool▁call▁begin｜>function<｜tool▁sep｜>" + c.name + "\n```json\n" + c.arguments.dump() +
             "\n```<｜tool▁call▁end｜>";
    });
    s += "<｜tool▁calls▁end｜>";
  }
  if (format == "deepseek_v3") {
    s = "<｜tool▁calls▁begin｜>";
    each("", [](const PlainCall& c) { return "<｜tool▁call▁begin｜>" + c.name + "<｜tool▁sep｜>" + c.arguments.dump() + "<｜tool▁call▁end｜>"; });
    s += "<｜tool▁calls▁end｜>";
  }
  return s;
}

struct StreamedReply {
  std::string content;
  std::vector<PlainCall> calls;  // arguments parsed from the concatenated fragments
  bool called = false;
  bool ok = true;  // every fragment joined into JSON; ids on first deltas only
};

// `text` pushed in pieces ending at `cuts` (increasing byte offsets), then finished.
inline StreamedReply stream_reply(const ToolFormat& format, const std::vector<ToolFunction>& tools,
                                  std::string_view text, const std::vector<size_t>& cuts) {
  ToolCallStream stream(format, tools);
  StreamedReply r;
  std::vector<std::string> names, args;
  auto take = [&](const std::vector<ToolCallDelta>& deltas) {
    for (const ToolCallDelta& d : deltas) {
      if (d.index == static_cast<int32_t>(names.size())) {
        if (d.id.empty() || d.name.empty()) r.ok = false;
        names.push_back(d.name);
        args.emplace_back();
      } else if (d.index + 1 != static_cast<int32_t>(names.size()) || !d.id.empty()) {
        r.ok = false;
        continue;
      }
      args.back() += d.arguments;
    }
  };
  size_t from = 0;
  for (size_t cut : cuts) {
    ToolStreamOutput out = stream.push(text.substr(from, cut - from));
    r.content += out.content;
    take(out.calls);
    from = cut;
  }
  ToolStreamOutput out = stream.push(text.substr(from));
  r.content += out.content;
  take(out.calls);
  std::string held;
  take(stream.finish(&held, &r.called));
  r.content += held;
  for (size_t i = 0; i < names.size(); ++i) {
    ordered_json a = ordered_json::parse(args[i], nullptr, false);
    if (a.is_discarded()) r.ok = false;
    r.calls.push_back({names[i], a});
  }
  return r;
}

// The byte offsets at which a server can cut `text` (UTF-8 character boundaries).
inline std::vector<size_t> char_boundaries(std::string_view text) {
  std::vector<size_t> out;
  for (size_t i = 1; i < text.size(); ++i)
    if ((static_cast<unsigned char>(text[i]) & 0xC0) != 0x80) out.push_back(i);
  return out;
}

inline bool grammar_accepts(const std::string& gbnf, const std::string& text) {
  const grammar::Grammar g = grammar::parse_gbnf(gbnf);
  grammar::StackMachine m(g);
  grammar::MatchState s = m.initial();
  return m.accept(s, text) && grammar::StackMachine::can_end(s);
}

}  // namespace seer::server::testing
