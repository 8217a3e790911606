#pragma once
// `DELETE /v1/conversations/{id}`: forgets a conversation of the caller's tenant,
// its history and cached KV on every tier (docs/pensieve.md, docs/security.md). 200 {"id","object":"conversation.deleted","deleted":true};
// 404 when the id is not cached (never existed, expired, or already deleted).
#include <string>

#include "server/async_engine.h"
#include "server/http_message.h"

namespace seer::server {

void handle_delete_conversation(AsyncEngine& engine, const std::string& tenant, const std::string& id,
                                HttpResponse& res);

}  // namespace seer::server
