#pragma once
// What the HTTP front end (server/http_server.h) and each of its connections
// (server/session.h) are configured with: address, limits, deadlines, access and
// the per-tenant limits.
#include <cstddef>
#include <string>

#include "server/prepare_pool.h"
#include "server/request_guard.h"
#include "server/tenant_limits.h"

namespace seer::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port
  size_t max_body_bytes = 8 << 20;
  int threads = 2;                      // I/O threads (handlers run on them; they never wait)
  int max_connections = 4096;           // open connections; more get 503
  double header_timeout_s = 10;         // from connect (or the previous response) to a complete header
  double body_timeout_s = 30;           // to a complete body once the header is in
  double keep_alive_timeout_s = 5;      // an idle keep-alive connection is closed after this
  double write_timeout_s = 30;          // one write to a client that does not read
  std::string policy;                   // reported in /health and seer_info
  std::string replica_name;             // --replica-name: in /health ("" leaves it out)
  AccessOptions access;                 // keys, allowed hosts (docs/security.md)
  PrepareOptions prepare;               // the workers that parse, compile and tokenize bodies
  TenantLimitOptions tenant_limits;     // requests in flight and tokens per minute, per tenant
  bool trust_client_conversation_ids = false;  // chosen ids without keys (a trusted front end)
};

}  // namespace seer::server
