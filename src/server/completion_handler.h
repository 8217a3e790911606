#pragma once
// POST /v1/completions and /v1/chat/completions: parse and validate, build the
// engine request, enqueue it, then either stream SSE chunks as tokens arrive or wait
// for the whole answer. A client that goes away has its request cancelled at once.
#include <atomic>
#include <chrono>
#include <memory>

#include <httplib.h>

#include "server/async_engine.h"
#include "server/openai_request.h"
#include "server/request_builder.h"

namespace seer::server {

class CompletionHandler {
 public:
  CompletionHandler(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics);

  void handle(const httplib::Request& req, httplib::Response& res, Endpoint endpoint);

  // Responses still being produced (handlers running or streams being written).
  int active_responses() const { return active_->load(); }

  // How often a waiting handler checks whether its client is still there.
  static constexpr std::chrono::milliseconds kPollInterval{50};

 private:
  void respond_streaming(const httplib::Request& req, httplib::Response& res, const ApiRequest& api,
                         std::shared_ptr<RequestStream> stream, const ResponseContext& ctx);
  void respond_whole(const httplib::Request& req, httplib::Response& res, std::shared_ptr<RequestStream> stream,
                     const ResponseContext& ctx);

  AsyncEngine& engine_;
  const ModelInfo& model_;
  ServerMetrics& metrics_;
  ParseLimits limits_;
  std::shared_ptr<std::atomic<int>> active_ = std::make_shared<std::atomic<int>>(0);
};

// Writes an OpenAI error body with its status.
void send_error(httplib::Response& res, const class ApiError& e);

}  // namespace seer::server
