#pragma once
// The HTTP front end's routing table (server/http_server.h): handlers by method and
// full-path regex.
#include <functional>
#include <regex>
#include <string>
#include <vector>

#include "server/http_message.h"

namespace seer::server {

using RouteHandler = std::function<void(const HttpRequest&, HttpResponse&)>;

// Routes by method and full-path regex, in the order added.
class Router {
 public:
  void Get(const std::string& pattern, RouteHandler h) { add("GET", pattern, std::move(h)); }
  void Post(const std::string& pattern, RouteHandler h) { add("POST", pattern, std::move(h)); }
  void Delete(const std::string& pattern, RouteHandler h) { add("DELETE", pattern, std::move(h)); }
  // Fills req.matches and runs the handler; false when no route matches.
  [[nodiscard]] bool dispatch(HttpRequest& req, HttpResponse& res) const;

 private:
  struct Route {
    std::string method;
    std::regex pattern;
    RouteHandler handler;
  };
  void add(const std::string& method, const std::string& pattern, RouteHandler h);
  std::vector<Route> routes_;
};

}  // namespace seer::server
