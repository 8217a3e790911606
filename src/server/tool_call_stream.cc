#include "server/tool_call_stream.h"

#include "server/tool_formats/registry.h"

namespace seer::server {

namespace {
std::vector<ToolFunction> unschematized(const std::vector<std::string>& names) {
  std::vector<ToolFunction> tools;
  for (const std::string& n : names) tools.push_back({n, "", nullptr});
  return tools;
}
}  // namespace

ToolCallStream::ToolCallStream(const ToolFormat& format, std::vector<ToolFunction> tools)
    : format_(format), tools_(std::move(tools)), openings_(format.openings()), scanner_(format.scanner(tools_)) {}

ToolCallStream::ToolCallStream(const std::vector<std::string>& tool_names)
    : ToolCallStream(hermes_tool_format(), unschematized(tool_names)) {}

ToolStreamOutput ToolCallStream::push(std::string_view text) {
  ToolStreamOutput out;
  out.content = content_part(text);
  if (in_call_) {
    out.calls = scanner_->feed(std::string_view(all_).substr(std::max(scanned_, emitted_)));
    scanned_ = all_.size();
  }
  return out;
}

bool ToolCallStream::opens_call(std::string_view head, bool* maybe) const {
  *maybe = false;
  if (openings_.reply_openers.find(head[0]) != std::string_view::npos) return true;
  for (auto m : openings_.markers) {
    if (head.size() >= m.size() && head.substr(0, m.size()) == m) return true;
    if (head.size() < m.size() && m.substr(0, head.size()) == head) *maybe = true;
  }
  return false;
}

std::string ToolCallStream::content_part(std::string_view text) {
  all_ += text;
  if (in_call_) return "";
  if (!text_) {
    const size_t first = all_.find_first_not_of(" \t\r\n");
    if (first == std::string::npos) return "";
    bool maybe = false;
    if (opens_call(std::string_view(all_).substr(first), &maybe)) {
      in_call_ = true;
      return "";
    }
    if (maybe) return "";
    text_ = true;
  }
  // Plain text: a marker may still come; hold back any tail that could begin one.
  std::string_view pending = std::string_view(all_).substr(emitted_);
  size_t marker = std::string_view::npos;
  for (auto m : openings_.markers) marker = std::min(marker, pending.find(m));
  size_t safe = marker == std::string_view::npos ? pending.size() : marker;
  if (marker == std::string_view::npos)
    for (auto m : openings_.markers)
      for (size_t k = std::min(m.size() - 1, pending.size()); k > 0; --k)
        if (pending.substr(pending.size() - k) == m.substr(0, k)) {
          safe = std::min(safe, pending.size() - k);
          break;
        }
  if (marker != std::string_view::npos) in_call_ = true;
  std::string out(pending.substr(0, safe));
  emitted_ += safe;
  return out;
}

std::vector<ToolCallDelta> ToolCallStream::finish(std::string* content, bool* called) {
  std::string_view pending = std::string_view(all_).substr(emitted_);
  std::string before;
  auto calls = format_.parse(pending, tools_, &before);
  *called = calls.has_value();
  if (!calls) {
    *content = std::string(pending);
    return {};
  }
  *content = before;
  std::vector<ToolCallDelta> rest = in_call_ ? scanner_->flush() : std::vector<ToolCallDelta>{};
  for (int32_t i = 0; i < static_cast<int32_t>(calls->size()); ++i) {
    const ToolCall& c = (*calls)[static_cast<size_t>(i)];
    if (i >= scanner_->calls_started()) {
      rest.push_back({i, c.id, c.name, ""});
      rest.push_back({i, "", "", c.arguments});
    } else if (!scanner_->arguments_started(i)) {
      rest.push_back({i, "", "", c.arguments});
    }
  }
  return rest;
}

}  // namespace seer::server
