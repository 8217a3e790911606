#include "server/router.h"

namespace seer::server {

void Router::add(const std::string& method, const std::string& pattern, RouteHandler h) {
  routes_.push_back({method, std::regex(pattern), std::move(h)});
}

bool Router::dispatch(HttpRequest& req, HttpResponse& res) const {
  for (const Route& r : routes_) {
    std::smatch m;
    if (r.method != req.method || !std::regex_match(req.path, m, r.pattern)) continue;
    req.matches.assign(m.begin(), m.end());
    r.handler(req, res);
    return true;
  }
  return false;
}

}  // namespace seer::server
