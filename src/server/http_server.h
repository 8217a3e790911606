#pragma once
// The HTTP front end: OpenAI routes, /health, /metrics, the live view (GET /,
// /v1/state), error shapes for every failure (unknown route, body too large,
// exceptions), and a graceful stop.
//
// Transport: Boost.Beast over Asio, event-driven (docs/serving.md, "Connections"). A
// few I/O threads serve every connection; a connection waiting for its header, its
// body or its next token holds a socket and a timer, never a thread. Each phase has
// a deadline (header, body, keep-alive idle, write); connections beyond
// max_connections get 503 and are closed. One connection: server/session.h (a
// request is refused from its head, before its body is read).
#include <atomic>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <regex>
#include <string>
#include <vector>

#include "server/async_engine.h"
#include "server/completion_handler.h"
#include "server/http_message.h"
#include "server/request_builder.h"
#include "server/request_guard.h"
#include "server/server_metrics.h"
#include "server/tokenize_handler.h"

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

class HttpServer {
 public:
  HttpServer(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics, HttpOptions opts);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the listening socket; throws seer::Error when the address is unusable.
  // Returns the bound port.
  int bind();
  // Serves until stop(); returns false if the listener failed.
  [[nodiscard]] bool serve();
  // Graceful stop: new requests get 503 while the engine drains (up to `grace`),
  // the rest are aborted, open responses get up to `grace` more to be written,
  // then the listener closes.
  void stop(std::chrono::milliseconds grace);

  // Routes are added before serve(); handlers run on I/O threads and must not block.
  Router& router() { return router_; }
  // Connections open now (for /v1/state and tests).
  int open_connections() const;

  class Transport;  // Beast/Asio, in http_server.cc; its connections in session.cc

 private:
  void add_routes();
  // GET /props: the model, its context and template, the policy (llama-server's shape).
  nlohmann::json server_props() const;

  // Set at construction.
  AsyncEngine& engine_;
  const ModelInfo& model_;
  ServerMetrics& metrics_;
  HttpOptions opts_;
  RequestGuard guard_;
  ConversationIdRules conversation_ids_;
  // Parses, compiles and tokenizes bodies for the handlers below; joined first on
  // destruction, since its workers post to connections of the transport.
  std::unique_ptr<PreparePool> prepare_;
  std::unique_ptr<TenantLimits> tenant_limits_;  // connections, requests and tokens per tenant
  CompletionHandler completions_;
  TokenizeHandler tokenize_;
  Router router_;
  std::unique_ptr<Transport> transport_;
  // Shared with the I/O threads.
  std::atomic<bool> draining_{false};
};

}  // namespace seer::server
