#include "server/http_server.h"

#include <sys/socket.h>

#include <ctime>
#include <thread>

#include "common/error.h"
#include "server/api_error.h"
#include "server/conversation_handler.h"

namespace seer::server {

HttpServer::HttpServer(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics, HttpOptions opts)
    : engine_(engine), model_(model), metrics_(metrics), opts_(std::move(opts)),
      completions_(engine, model, metrics) {
  const int threads = opts_.threads;
  http_.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };
  http_.set_payload_max_length(opts_.max_body_bytes);
  http_.set_keep_alive_timeout(opts_.keep_alive_timeout_s);
  http_.set_read_timeout(30, 0);
  http_.set_write_timeout(30, 0);
  http_.set_tcp_nodelay(true);
  http_.set_socket_options([this](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    listen_fd_ = sock;
  });
  metrics_.registry()
      .gauge("seer_info", "Constant 1, labelled with the served model and scheduling policy.",
             {{"model", model_.served_name}, {"policy", opts_.policy}})
      .set(1);
  add_routes();
}

HttpServer::~HttpServer() = default;

void HttpServer::add_routes() {
  http_.Get("/health", [this](const httplib::Request&, httplib::Response& res) {
    bool ok = !draining_.load() && engine_.accepting() && !engine_.failed();
    res.status = ok ? 200 : 503;
    nlohmann::json body = {{"status", ok ? "ok" : (engine_.failed() ? "failed" : "shutting_down")},
                           {"model", model_.served_name},
                           {"policy", opts_.policy},
                           {"requests_in_flight", engine_.num_in_flight()}};
    res.set_content(dump_json(body), "application/json");
  });
  http_.Get("/v1/models", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(dump_json(models_list({model_.served_name}, 0)), "application/json");
  });
  http_.Get(R"(/v1/models/(.+))", [this](const httplib::Request& req, httplib::Response& res) {
    if (req.matches[1] != model_.served_name) return send_error(res, model_not_found_error(req.matches[1]));
    res.set_content(dump_json(models_list({model_.served_name}, 0)["data"][0]), "application/json");
  });
  http_.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto completion = [this](Endpoint endpoint) {
    return [this, endpoint](const httplib::Request& req, httplib::Response& res) {
      if (draining_.load()) {
        metrics_.count_rejected(503);
        return send_error(res, shutting_down_error());
      }
      completions_.handle(req, res, endpoint);
    };
  };
  http_.Post("/v1/completions", completion(Endpoint::Completions));
  http_.Post("/v1/chat/completions", completion(Endpoint::ChatCompletions));
  http_.Delete(R"(/v1/conversations/([^/]+))", [this](const httplib::Request& req, httplib::Response& res) {
    handle_delete_conversation(engine_, req.matches[1], res);
  });

  // Routing misses and httplib's own refusals (413, 400 on a broken request line)
  // arrive here with an empty body; give them OpenAI's error shape.
  http_.set_error_handler(httplib::Server::HandlerWithResponse([this](const httplib::Request& req,
                                                                       httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    if (res.status == 404) send_error(res, route_not_found_error(req.method, req.path));
    else if (res.status == 413) send_error(res, body_too_large_error(opts_.max_body_bytes));
    else send_error(res, ApiError(res.status, res.status >= 500 ? "server_error" : "invalid_request_error", "",
                                  "http_error", fmt::format("the request failed with HTTP status {}", res.status)));
    return httplib::Server::HandlerResponse::Handled;
  }));
  http_.set_exception_handler([this](const httplib::Request&, httplib::Response& res, std::exception_ptr ep) {
    std::string what = "unknown exception";
    try {
      std::rethrow_exception(ep);
    } catch (const std::exception& e) {
      what = e.what();
    } catch (...) {
    }
    metrics_.count_rejected(500);
    send_error(res, internal_error(what));
  });
}

int HttpServer::bind() {
  if (opts_.port == 0) {
    int port = http_.bind_to_any_port(opts_.host);
    if (port <= 0) fail("cannot listen on {} (any port)", opts_.host);
    opts_.port = port;
  } else if (!http_.bind_to_port(opts_.host, opts_.port)) {
    fail("cannot listen on {}:{} (address in use or not available)", opts_.host, opts_.port);
  }
  // This cpp-httplib build listens with a backlog of 5: a burst of connections (200
  // clients at once) would overflow it. Listening again only raises the backlog.
  if (listen_fd_ >= 0) ::listen(listen_fd_, kListenBacklog);
  return opts_.port;
}

bool HttpServer::serve() { return http_.listen_after_bind(); }

void HttpServer::stop(std::chrono::milliseconds grace) {
  draining_.store(true);
  engine_.shutdown(grace);
  // Aborted streams still have their last chunk and [DONE] to write.
  const auto deadline = std::chrono::steady_clock::now() + grace + std::chrono::seconds(1);
  while (completions_.active_responses() > 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  http_.stop();
}

}  // namespace seer::server
