#pragma once
// The conversation a request continues (docs/pensieve.md, docs/security.md): the
// body's `conversation` field, or the `X-Conversation-Id` header, which an HTTP load
// balancer can hash on without reading the body (deploy/haproxy.cfg.in). Both may be
// sent; they must then agree.
//
// Who may name a conversation: ids are scoped by tenant (kv/conversation_key.h), so
// with API keys a client may choose its own. Without keys every client is the one
// anonymous tenant, so a chosen id ("acct-alice-1") is guessable by anyone: the
// server then accepts only ids it issued itself ("new" asks for one), 128 random
// bits that only their holder knows — unless --trust-client-conversation-ids says a
// trusted front end chooses them.
#include <string>

namespace seer::server {

inline constexpr const char* kConversationHeader = "X-Conversation-Id";
// The id a client sends to start a conversation under a server-issued id.
inline constexpr const char* kNewConversation = "new";

struct ConversationIdRules {
  size_t max_bytes = 128;
  bool client_chosen_ids = true;  // false: only issued ids (no keys, untrusted clients)
};

// 1..max_bytes characters of [A-Za-z0-9_.:-].
[[nodiscard]] bool valid_conversation_id(const std::string& id, size_t max_bytes);

// "conv_" and 32 hex digits from the kernel's random source.
[[nodiscard]] std::string issue_conversation_id();
[[nodiscard]] bool is_issued_conversation_id(const std::string& id);

// The conversation id from the body field ("" when absent) and the header value ("" when
// absent or empty), with "new" replaced by a freshly issued id. Throws ApiError 400
// when the header is malformed, names another conversation than the body, or the id
// is one the rules do not let this client choose.
std::string resolve_conversation_id(const std::string& body_id, const std::string& header_value,
                                    const ConversationIdRules& rules);

// The id of an existing conversation (DELETE /v1/conversations/{id}): as above, but
// "new" names nothing.
std::string resolve_existing_conversation_id(const std::string& path_id, const std::string& header_value,
                                             const ConversationIdRules& rules);

}  // namespace seer::server
