#pragma once
// POST /tokenize and /detokenize in llama-server's and vLLM's shapes, and GET /props,
// what the server runs (docs/serving.md "Tokenize"):
//   /tokenize    {"content" | "prompt": TEXT, "add_special" | "add_special_tokens": B,
//                 "with_pieces": B} or {"messages": [...]} (rendered by the chat
//                 template as /v1/chat/completions would) ->
//                {"tokens": [ids] or [{"id", "piece"}], "count", "max_model_len"}
//   /detokenize  {"tokens": [ids]} -> {"content": TEXT, "prompt": TEXT}
// Tokenizing a long text is work that grows with the body: it runs on the prepare
// workers, like a completion's.
#include "server/http_message.h"
#include "server/prepare_pool.h"
#include "server/request_builder.h"
#include "server/server_metrics.h"

namespace seer::server {

class TokenizeHandler {
 public:
  TokenizeHandler(const ModelInfo& model, PreparePool& workers, ServerMetrics& metrics)
      : model_(model), workers_(workers), metrics_(metrics) {}

  void tokenize(const HttpRequest& req, HttpResponse& res);
  void detokenize(const HttpRequest& req, HttpResponse& res);

 private:
  // Runs `work` on a worker and answers with what it returns (or its ApiError).
  void on_worker(HttpResponse& res, std::function<HttpResponse()> work);

  const ModelInfo& model_;
  PreparePool& workers_;
  ServerMetrics& metrics_;
};

}  // namespace seer::server
