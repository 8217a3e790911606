#pragma once
// `DELETE /v1/conversations/{id}`: forgets a conversation's history and cached KV
// (docs/pensieve.md). 200 {"id","object":"conversation.deleted","deleted":true};
// 404 when the id is not cached (never existed, expired, or already deleted).
#include <string>

#include <httplib.h>

#include "server/async_engine.h"

namespace seer::server {

void handle_delete_conversation(AsyncEngine& engine, const std::string& id, httplib::Response& res);

}  // namespace seer::server
