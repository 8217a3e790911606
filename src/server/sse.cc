#include "server/sse.h"

#include "server/openai_response.h"

namespace seer::server {

std::string sse_event(std::string_view payload) {
  std::string out;
  out.reserve(payload.size() + 16);
  size_t start = 0;
  while (true) {
    size_t nl = payload.find('\n', start);
    std::string_view line = payload.substr(start, nl == std::string_view::npos ? std::string_view::npos : nl - start);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out += "data: ";
    out += line;
    out += '\n';
    if (nl == std::string_view::npos) break;
    start = nl + 1;
  }
  out += '\n';
  return out;
}

std::string sse_json(const nlohmann::json& payload) { return sse_event(std::string_view(dump_json(payload))); }

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string sse_comment(std::string_view text) {
  std::string out = ": ";
  for (char c : text) out += (c == '\n' || c == '\r') ? ' ' : c;
  out += "\n\n";
  return out;
}

}  // namespace seer::server
