#include "server/conversation_id.h"

#include <cctype>

#include "server/api_error.h"

namespace seer::server {

bool valid_conversation_id(const std::string& id, size_t max_bytes) {
  if (id.empty() || id.size() > max_bytes) return false;
  for (unsigned char c : id)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.' && c != ':') return false;
  return true;
}

std::string resolve_conversation_id(const std::string& body_id, const std::string& header_value, size_t max_bytes) {
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

}  // namespace seer::server
