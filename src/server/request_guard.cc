#include "server/request_guard.h"

#include <strings.h>

#include <algorithm>
#include <cctype>

#include "server/api_error.h"
#include "server/conversation_id.h"

namespace seer::server {

namespace {

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Headers that say who asks or what about: two values would let the server and a
// proxy in front of it read different ones.
constexpr const char* kSingleHeaders[] = {"Host", "Authorization", "Content-Type", kConversationHeader};

size_t count_header(const HttpRequest& req, const char* name) {
  return static_cast<size_t>(std::count_if(req.headers.begin(), req.headers.end(), [&](const auto& h) {
    return strcasecmp(h.first.c_str(), name) == 0;
  }));
}

bool is_json_media_type(std::string_view content_type) {
  const std::string_view type = trim(content_type.substr(0, content_type.find(';')));
  return lower(type) == "application/json";
}

}  // namespace

std::vector<std::string> default_allowed_hosts(const std::string& listen_host) {
  std::vector<std::string> hosts = {"localhost", "127.0.0.1", "::1"};
  const std::string listen = host_name_of(listen_host);
  if (!listen.empty() && listen != "0.0.0.0" && listen != "::" &&
      std::find(hosts.begin(), hosts.end(), listen) == hosts.end())
    hosts.push_back(listen);
  return hosts;
}

std::string host_name_of(std::string_view host_header) {
  std::string_view h = trim(host_header);
  if (!h.empty() && h.front() == '[') {  // [v6]:port
    const size_t close = h.find(']');
    return lower(close == std::string_view::npos ? h.substr(1) : h.substr(1, close - 1));
  }
  if (std::count(h.begin(), h.end(), ':') == 1) h = h.substr(0, h.find(':'));
  return lower(h);
}

RequestGuard::RequestGuard(AccessOptions opts, const std::string& listen_host) : opts_(std::move(opts)) {
  if (opts_.allowed_hosts.empty()) opts_.allowed_hosts = default_allowed_hosts(listen_host);
  for (std::string& h : opts_.allowed_hosts) h = host_name_of(h);
}

bool RequestGuard::host_allowed(const HttpRequest& req) const {
  const auto& hosts = opts_.allowed_hosts;
  if (std::find(hosts.begin(), hosts.end(), "*") != hosts.end()) return true;
  const std::string value = req.get_header_value("Host");
  // No Host at all (HTTP/1.0 tools): no browser sends such a request, so no rebinding.
  if (value.empty()) return true;
  return std::find(hosts.begin(), hosts.end(), host_name_of(value)) != hosts.end();
}

bool RequestGuard::needs_key(const HttpRequest& req) const {
  if (req.method == "GET" && (req.path == "/health" || req.path == "/")) return false;
  if (req.method == "GET" && (req.path == "/metrics" || req.path == "/v1/state")) return !opts_.metrics_public;
  return true;
}

void RequestGuard::admit(HttpRequest& req) const {
  if (!host_allowed(req))
    throw ApiError(421, "invalid_request_error", "", "host_not_allowed",
                   fmt::format("this server does not answer to Host '{}' (see --allowed-hosts)",
                               req.get_header_value("Host").substr(0, 128)));
  for (const char* name : kSingleHeaders)
    if (count_header(req, name) > 1)
      throw ApiError(400, "invalid_request_error", name, "duplicate_header",
                     fmt::format("the {} header was sent more than once", name));
  req.tenant = kAnonymousTenant;
  if (opts_.keys && opts_.keys->enabled()) {
    std::optional<std::string> tenant = opts_.keys->authenticate(req.get_header_value("Authorization"));
    if (tenant) req.tenant = *tenant;
    else if (needs_key(req))
      throw ApiError(401, "invalid_request_error", "", "invalid_api_key",
                     "a valid API key is required: send 'Authorization: Bearer KEY'");
  }
  if (req.method == "POST" && !is_json_media_type(req.get_header_value("Content-Type")))
    throw ApiError(415, "invalid_request_error", "", "unsupported_media_type",
                   "request bodies must be sent with 'Content-Type: application/json'");
}

}  // namespace seer::server
