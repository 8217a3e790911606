#pragma once
// POST /v1/completions and /v1/chat/completions: a worker of the prepare pool parses
// and validates the body and builds the engine requests (schemas and grammars
// compiled, the chat rendered and tokenized); the connection's strand enqueues them,
// then answers asynchronously: the request's
// RequestStream wakes the connection's strand when tokens arrive, which writes SSE
// chunks (stream: true) or, at the end, the whole answer. No thread waits. A client
// that goes away has its request cancelled at once. A thinking model's reply is split
// into reasoning_content and content (server/reasoning_parser.h); tool calls are
// looked for in the content, then in the reasoning.
#include <atomic>
#include <memory>

#include "server/async_engine.h"
#include "server/conversation_id.h"
#include "server/http_message.h"
#include "server/openai_request.h"
#include "server/prepare_pool.h"
#include "server/reasoning_memory.h"
#include "server/request_builder.h"
#include "server/tenant_limits.h"

namespace seer::server {

class CompletionHandler {
 public:
  CompletionHandler(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics,
                    ConversationIdRules conversation_ids, PreparePool& workers, TenantLimits& tenant_limits);
  ~CompletionHandler();
  CompletionHandler(const CompletionHandler&) = delete;
  CompletionHandler& operator=(const CompletionHandler&) = delete;

  // Runs on an I/O thread; never blocks: the work is queued on the prepare pool.
  void handle(const HttpRequest& req, HttpResponse& res, Endpoint endpoint);

  // Responses still being produced (being prepared, or streams being written).
  int active_responses() const { return active_->load(); }

 private:
  struct PrepareInput {  // copied from the HttpRequest, which lives only for handle()
    std::string body;
    std::string conversation_header;
    std::string tenant;
    Endpoint endpoint;
  };
  struct Prepared;
  // On a worker; throws ApiError.
  Prepared prepare(const PrepareInput& in);
  // On the connection's strand.
  void start(Prepared& p, const std::shared_ptr<ResponseChannel>& channel);
  void refuse(const std::shared_ptr<ResponseChannel>& channel, const class ApiError& e);

  // Set at construction.
  AsyncEngine& engine_;
  const ModelInfo& model_;
  ServerMetrics& metrics_;
  ParseLimits limits_;
  ConversationIdRules conversation_ids_;
  TenantLimits& tenant_limits_;  // the server's
  // The reasoning of replies, for clients that send the history back without it.
  ReasoningMemory reasoning_memory_;
  std::shared_ptr<std::atomic<int>> active_ = std::make_shared<std::atomic<int>>(0);
  PreparePool& workers_;  // the server's
};

// Writes an OpenAI error body with its status, and the headers that go with it:
// Retry-After on 429 and 503, WWW-Authenticate on 401.
void send_error(HttpResponse& res, const class ApiError& e);

}  // namespace seer::server
