#include "server/conversation_handler.h"

#include <fmt/format.h>

#include "kv/conversation_key.h"
#include "server/api_error.h"
#include "server/completion_handler.h"
#include "server/openai_response.h"

namespace seer::server {

void handle_delete_conversation(AsyncEngine& engine, const std::string& tenant, const std::string& id,
                                HttpResponse& res) {
  if (!engine.delete_conversation(conversation_key(tenant, id)))
    return send_error(res, ApiError(404, "invalid_request_error", "conversation", "conversation_not_found",
                                    fmt::format("no cached conversation '{}' (unknown, expired or deleted)", id)));
  nlohmann::json body = {{"id", id}, {"object", "conversation.deleted"}, {"deleted", true}};
  res.set_content(dump_json(body), "application/json");
}

}  // namespace seer::server
