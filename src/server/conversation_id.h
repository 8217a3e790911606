#pragma once
// The conversation a request continues (docs/pensieve.md, docs/deploy.md): the body's
// `conversation` field, or the `X-Conversation-Id` header, which an HTTP load balancer
// can hash on without reading the body (deploy/haproxy.cfg.in). Both may be sent; they
// must then agree.
#include <string>

namespace seer::server {

inline constexpr const char* kConversationHeader = "X-Conversation-Id";

// 1..max_bytes characters of [A-Za-z0-9_.:-].
[[nodiscard]] bool valid_conversation_id(const std::string& id, size_t max_bytes);

// The conversation id from the body field ("" when absent) and the header value ("" when
// absent or empty). Throws ApiError 400 when the header is malformed or names another
// conversation than the body.
std::string resolve_conversation_id(const std::string& body_id, const std::string& header_value, size_t max_bytes);

}  // namespace seer::server
