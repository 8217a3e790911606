#pragma once
// Reading a call region that may still be arriving: every function here tells
// "not arrived yet" (npos / Partial) apart from "cannot be this" (Bad), so a scan of
// a prefix of the reply never commits to what the rest may contradict.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "server/tool_types.h"

namespace seer::server {

constexpr size_t kNotYet = std::string_view::npos;

size_t skip_space(std::string_view s, size_t i);
// `s` without leading and trailing spaces.
std::string trim_space(std::string_view s);

enum class Match { Yes, Partial, No };
// Whether s[i..] begins with `lit` (Partial: the text ends inside it).
Match match_at(std::string_view s, size_t i, std::string_view lit);

// Past the end of the JSON value starting at s[i] (object, array, string or scalar);
// kNotYet when it has not all arrived. A scalar ends at the first byte that cannot
// continue it. Does not validate: parse what it spans.
size_t json_value_end(std::string_view s, size_t i);

// JSON text of a value built from a model's text, whose strings may hold invalid
// UTF-8 (replaced, where dump() would throw).
std::string model_json_text(const nlohmann::ordered_json& v);

// The function of `tools` named `name`, or null.
const ToolFunction* find_tool(const std::vector<ToolFunction>& tools, std::string_view name);

// What a scan of a call region found so far: each call's name once it is whole, the
// arguments object's text as far as it is settled (a prefix of its final text), and
// whether the call ended; malformed when the text stopped being a call this format
// can read.
struct ScannedCall {
  std::string name;
  std::string arguments;
  bool complete = false;
};
struct CallScan {
  std::vector<ScannedCall> calls;
  bool malformed = false;
};

// A {"name": ..., "arguments" | "parameters": {...} or "..."} object from s[i] (at
// `{`): fills `call` as far as it has arrived; returns past its `}`, kNotYet, or sets
// *bad.
size_t scan_json_call_object(std::string_view s, size_t i, const std::vector<ToolFunction>& tools, ScannedCall* call,
                             bool* bad);

// Calls in the shape MARKER [ obj, obj, ... ] CLOSE (CLOSE may be empty or missing at
// the end; MARKER too, when the list is the whole reply), as Granite, functools and
// Nemotron write them.
CallScan scan_json_call_list(std::string_view region, std::string_view marker, std::string_view close,
                             const std::vector<ToolFunction>& tools);

}  // namespace seer::server
