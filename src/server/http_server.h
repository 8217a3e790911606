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
#include <memory>
#include <string>

#include "server/async_engine.h"
#include "server/completion_handler.h"
#include "server/http_options.h"
#include "server/request_builder.h"
#include "server/request_guard.h"
#include "server/router.h"
#include "server/server_metrics.h"
#include "server/tokenize_handler.h"

namespace seer::server {

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
