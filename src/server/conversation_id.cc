#include "server/conversation_id.h"

#include <sys/random.h>

#include <array>
#include <cctype>

#include "common/error.h"
#include "server/api_error.h"

namespace seer::server {

namespace {

constexpr std::string_view kIssuedPrefix = "conv_";
constexpr size_t kIssuedHexDigits = 32;

std::string checked_id(const std::string& body_id, const std::string& header_value, size_t max_bytes) {
  if (header_value.empty()) return body_id;
  if (!valid_conversation_id(header_value, max_bytes))
    throw ApiError(400, "invalid_request_error", kConversationHeader, "invalid_value",
                   fmt::format("the {} header must be 1-{} characters of [A-Za-z0-9_.:-]", kConversationHeader,
                               max_bytes));
  if (!body_id.empty() && body_id != header_value)
    throw ApiError(400, "invalid_request_error", "conversation", "conversation_mismatch",
                   fmt::format("the body's 'conversation' ('{}') and the {} header ('{}') name different "
                               "conversations: send one, or the same id in both",
                               body_id, kConversationHeader, header_value));
  return header_value;
}

void check_chosen(const std::string& id, const ConversationIdRules& rules) {
  if (id.empty() || rules.client_chosen_ids || is_issued_conversation_id(id)) return;
  throw ApiError(400, "invalid_request_error", "conversation", "conversation_id_not_issued",
                 fmt::format("'{}' is not a conversation id this server issued: without API keys, start a "
                             "conversation with \"conversation\": \"new\" and use the id the response returns "
                             "(or run the server with --api-key, or --trust-client-conversation-ids behind a "
                             "trusted front end)",
                             id.substr(0, 64)));
}

}  // namespace

bool valid_conversation_id(const std::string& id, size_t max_bytes) {
  if (id.empty() || id.size() > max_bytes) return false;
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  return true;
}

std::string issue_conversation_id() {
  std::array<unsigned char, kIssuedHexDigits / 2> bytes{};
  size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = getrandom(bytes.data() + got, bytes.size() - got, 0);
    if (n < 0) {
      if (errno == EINTR) continue;
      fail("cannot read random bytes for a conversation id (errno {})", errno);
    }
    got += static_cast<size_t>(n);
  }
  std::string id(kIssuedPrefix);
  for (unsigned char b : bytes) id += fmt::format("{:02x}", b);
  return id;
}

bool is_issued_conversation_id(const std::string& id) {
  if (id.size() != kIssuedPrefix.size() + kIssuedHexDigits || id.compare(0, kIssuedPrefix.size(), kIssuedPrefix) != 0)
    return false;
  for (size_t i = kIssuedPrefix.size(); i < id.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(id[i])) && (id[i] < 'a' || id[i] > 'f')) return false;
  return true;
}

std::string resolve_conversation_id(const std::string& body_id, const std::string& header_value,
                                    const ConversationIdRules& rules) {
  const std::string id = checked_id(body_id, header_value, rules.max_bytes);
  if (id == kNewConversation) return issue_conversation_id();
  check_chosen(id, rules);
  return id;
}

std::string resolve_existing_conversation_id(const std::string& path_id, const std::string& header_value,
                                             const ConversationIdRules& rules) {
  const std::string id = checked_id(path_id, header_value, rules.max_bytes);
  if (id == kNewConversation)
    throw ApiError(400, "invalid_request_error", "conversation", "invalid_value",
                   "'new' starts a conversation; it names none to delete");
  check_chosen(id, rules);
  return id;
}

}  // namespace seer::server
