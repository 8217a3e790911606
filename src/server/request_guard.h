#pragma once
// What every request passes before it is routed (docs/security.md): a Host the
// server answers to (DNS rebinding: a web page whose name now resolves to 127.0.0.1
// sends its own Host), no duplicate of a header that decides who or what a request
// is about, an API key when keys are configured (whose tenant the request then acts
// for), and a JSON Content-Type on POSTs (a page can send text/plain across sites
// without asking the browser; application/json needs CORS, which seer never grants).
#include <string>
#include <string_view>
#include <vector>

#include "server/api_keys.h"
#include "server/http_message.h"

namespace seer::server {

struct AccessOptions {
  const ApiKeys* keys = nullptr;           // not owned; nullptr or none configured: open
  std::vector<std::string> allowed_hosts;  // host names, without ports; "*" allows any; empty: the defaults
  bool metrics_public = false;             // /metrics and /v1/state without a key
};

// The Host names answered by default: the listen address, localhost, 127.0.0.1 and ::1.
std::vector<std::string> default_allowed_hosts(const std::string& listen_host);

// "name" of a Host header value "name[:port]" ("[v6]" keeps its brackets off), lower-cased.
std::string host_name_of(std::string_view host_header);

class RequestGuard {
 public:
  RequestGuard(AccessOptions opts, const std::string& listen_host);

  // Throws ApiError: 421 host_not_allowed, 400 duplicate_header, 401 invalid_api_key,
  // 415 unsupported_media_type. Sets req.tenant.
  void admit(HttpRequest& req) const;

 private:
  bool host_allowed(const HttpRequest& req) const;
  bool needs_key(const HttpRequest& req) const;

  AccessOptions opts_;
};

}  // namespace seer::server
