#pragma once
// Server-sent events as OpenAI streams them: one `data: <json>` event per chunk, a
// blank line after each, and `data: [DONE]` at the end.
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace seer::server {

// One event carrying `payload` (a payload with newlines becomes several data lines,
// as the SSE format requires).
std::string sse_event(std::string_view payload);
std::string sse_json(const nlohmann::json& payload);  // sse_event of the serialised JSON
// The terminating event.
std::string sse_done();
// A comment line: ignored by clients, used as a keep-alive while a request waits.
std::string sse_comment(std::string_view text);

}  // namespace seer::server
