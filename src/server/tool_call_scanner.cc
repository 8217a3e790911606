#include "server/tool_call_scanner.h"

#include <algorithm>
#include <cctype>

#include "server/tool_calls.h"
#include "server/tool_formats/call_text.h"

namespace seer::server {
namespace {

constexpr std::string_view kMistralCall = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";

// After a key's closing quote at `i`: the position past `:` and spaces, npos when
// that has not all arrived, or `bad` when something else follows.
constexpr size_t kBad = std::string_view::npos - 1;
size_t after_colon(std::string_view s, size_t i) {
  i = skip_space(s, i);
  if (i >= s.size()) return std::string_view::npos;
  if (s[i] != ':') return kBad;
  i = skip_space(s, i + 1);
  return i >= s.size() ? std::string_view::npos : i;
}

}  // namespace

std::vector<ToolCallDelta> ToolCallScanner::feed(std::string_view text) {
  buf_ += text;
  std::vector<ToolCallDelta> out;
  for (bool progress = true; progress && !stopped_;) {
    switch (phase_) {
      case Phase::Name: progress = find_name(out); break;
      case Phase::Arguments: progress = find_arguments(); break;
      case Phase::InArguments:
        stream_arguments(out);
        progress = phase_ != Phase::InArguments;
        break;
    }
  }
  return out;
}

bool ToolCallScanner::find_name(std::vector<ToolCallDelta>& out) {
  const std::string_view s(buf_);
  const size_t json_key = s.find("\"name\"", pos_);
  const size_t mistral_args = s.find(kMistralArgs, pos_);
  std::string name;
  size_t next = 0;
  bool object_follows = false;  // [ARGS]{...}: no key before the arguments
  if (mistral_args != std::string_view::npos && (json_key == std::string_view::npos || mistral_args < json_key)) {
    const size_t call = s.rfind(kMistralCall, mistral_args);
    const size_t from = call == std::string_view::npos || call < pos_ ? pos_ : call + kMistralCall.size();
    const size_t brace = skip_space(s, mistral_args + kMistralArgs.size());
    if (brace >= s.size()) return false;  // wait for the object to begin
    if (s[brace] != '{') {
      stopped_ = true;
      return false;
    }
    name = std::string(s.substr(from, mistral_args - from));
    name.erase(0, name.find_first_not_of(" \t\r\n"));
    name.erase(name.find_last_not_of(" \t\r\n") + 1);
    next = brace;
    object_follows = true;
  } else {
    if (json_key == std::string_view::npos) return false;
    const size_t i = after_colon(s, json_key + 6);
    if (i == std::string_view::npos) return false;
    if (i == kBad || s[i] != '"') {
      stopped_ = true;
      return false;
    }
    const size_t close = s.find('"', i + 1);
    if (close == std::string_view::npos) return false;
    name = std::string(s.substr(i + 1, close - i - 1));
    next = close + 1;
  }
  if (std::find(names_.begin(), names_.end(), name) == names_.end()) {
    stopped_ = true;
    return false;
  }
  out.push_back({calls_started(), new_tool_call_id(), name, ""});
  args_state_.push_back(Args::None);
  pos_ = next;
  if (object_follows)
    begin_arguments();
  else
    phase_ = Phase::Arguments;
  return true;
}

void ToolCallScanner::begin_arguments() {
  phase_ = Phase::InArguments;
  depth_ = 0;
  in_string_ = escaped_ = false;
  args_state_.back() = Args::Started;
}

bool ToolCallScanner::find_arguments() {
  const std::string_view s(buf_);
  size_t key = std::string_view::npos, key_len = 0;
  for (std::string_view k : {std::string_view("\"arguments\""), std::string_view("\"parameters\"")}) {
    const size_t at = s.find(k, pos_);
    if (at < key) key = at, key_len = k.size();
  }
  if (key == std::string_view::npos) return false;
  const size_t i = after_colon(s, key + key_len);
  if (i == std::string_view::npos) return false;
  if (i == kBad || s[i] != '{') {
    stopped_ = true;  // e.g. arguments given as a JSON string: sent whole at the end
    return false;
  }
  pos_ = i;
  begin_arguments();
  return true;
}

void ToolCallScanner::stream_arguments(std::vector<ToolCallDelta>& out) {
  const size_t from = pos_;
  size_t i = pos_;
  for (; i < buf_.size(); ++i) {
    const char c = buf_[i];
    if (in_string_) {
      if (escaped_) escaped_ = false;
      else if (c == '\\') escaped_ = true;
      else if (c == '"') in_string_ = false;
      continue;
    }
    if (c == '"') in_string_ = true;
    else if (c == '{' || c == '[') ++depth_;
    else if ((c == '}' || c == ']') && --depth_ == 0) {
      ++i;
      args_state_.back() = Args::Complete;
      phase_ = Phase::Name;
      break;
    }
  }
  pos_ = i;
  if (i > from) out.push_back({calls_started() - 1, "", "", buf_.substr(from, i - from)});
}

}  // namespace seer::server
