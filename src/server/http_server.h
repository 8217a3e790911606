#pragma once
// The HTTP front end: OpenAI routes, /health, /metrics, error shapes for every
// failure (unknown route, body too large, exceptions), and a graceful stop.
#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include <httplib.h>

#include "server/async_engine.h"
#include "server/completion_handler.h"
#include "server/request_builder.h"
#include "server/server_metrics.h"

namespace seer::server {

struct HttpOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                      // 0: any free port
  size_t max_body_bytes = 8 << 20;
  int threads = 512;                    // connections served at once (each stream holds one)
  int keep_alive_timeout_s = 2;
  std::string policy;                   // reported in /health and seer_info
};

class HttpServer {
 public:
  HttpServer(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics, HttpOptions opts);
  ~HttpServer();

  // Binds the listening socket; throws seer::Error when the address is unusable.
  // Returns the bound port.
  int bind();
  // Serves until stop(); returns false if the listener failed.
  bool serve();
  // Graceful stop: new requests get 503 while the engine drains (up to `grace`),
  // the rest are aborted, open responses get up to `grace` more to be written,
  // then the listener closes.
  void stop(std::chrono::milliseconds grace);

 private:
  void add_routes();

  AsyncEngine& engine_;
  const ModelInfo& model_;
  ServerMetrics& metrics_;
  HttpOptions opts_;
  CompletionHandler completions_;
  httplib::Server http_;
  std::atomic<bool> draining_{false};
  int listen_fd_ = -1;
  static constexpr int kListenBacklog = 4096;
};

}  // namespace seer::server
