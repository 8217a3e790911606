#include "server/http_server.h"

#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>

#include "common/error.h"
#include "common/thread_name.h"
#include "server/api_error.h"
#include "server/conversation_handler.h"
#include "server/conversation_id.h"
#include "server/live_view.h"
#include "server/session.h"

namespace seer::server {

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace {

constexpr int kListenBacklog = 4096;

}  // namespace

// ---- transport ----------------------------------------------------------------

class HttpServer::Transport {
 public:
  Transport(const HttpOptions& opts, ConnectionServices::Admit admit, ConnectionServices::Handler handler,
            ConnectionServices::ErrorResponse error_response, ConnectionServices::HoldTenant hold_tenant)
      : services_{opts, std::move(admit), std::move(handler), std::move(error_response), std::move(hold_tenant)},
        acceptor_(ioc_) {}

  int bind(const std::string& host, int port);
  bool run(int threads);
  void stop();
  int connections() const { return services_.connections.load(); }
  int writes_in_flight() const { return services_.writes_in_flight.load(); }

 private:
  void accept();
  void reject_busy(tcp::socket socket);

  ConnectionServices services_;
  // Asio objects are used from the I/O threads only (stop() posts).
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  std::atomic<bool> failed_{false};
};

int HttpServer::Transport::bind(const std::string& host, int port) {
  beast::error_code ec;
  auto address = net::ip::make_address(host, ec);
  if (ec) fail("--host {}: not an IP address", host);
  tcp::endpoint ep(address, static_cast<unsigned short>(port));
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(kListenBacklog, ec);
  if (ec) fail("cannot listen on {}:{} ({})", host, port, ec.message());
  return acceptor_.local_endpoint().port();
}

void HttpServer::Transport::accept() {
  acceptor_.async_accept(net::make_strand(ioc_), [this](const beast::error_code& ec, tcp::socket socket) {
    if (!acceptor_.is_open()) return;
    if (ec == net::error::no_descriptors) {  // out of file descriptors: retry shortly
      auto timer = std::make_shared<net::steady_timer>(ioc_, std::chrono::milliseconds(50));
      timer->async_wait([this, timer](const beast::error_code&) { accept(); });
      return;
    }
    if (!ec) {
      if (services_.connections.load() >= services_.opts.max_connections) reject_busy(std::move(socket));
      else start_session(services_, std::move(socket));
    }
    accept();
  });
}

// Beyond max_connections: a 503 and close, without reading the request.
void HttpServer::Transport::reject_busy(tcp::socket socket) {
  HttpResponse res = services_.error_response(transport_error(503, services_.opts));
  auto sock = std::make_shared<tcp::socket>(std::move(socket));
  auto text = std::make_shared<std::string>(format_head(res.status, res.content_type, res.headers, res.body.size(),
                                                        false) + res.body);
  net::async_write(*sock, net::buffer(*text), [sock, text](const beast::error_code&, size_t) {
    beast::error_code ignored;
    sock->shutdown(tcp::socket::shutdown_both, ignored);
    sock->close(ignored);
  });
}

bool HttpServer::Transport::run(int threads) {
  accept();
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i)
    pool.emplace_back([this, i] {
      set_thread_name("seer-http-" + std::to_string(i));
      ioc_.run();
    });
  ioc_.run();
  for (auto& t : pool) t.join();
  return !failed_.load();
}

void HttpServer::Transport::stop() {
  net::post(ioc_, [this] {
    beast::error_code ignored;
    acceptor_.close(ignored);
  });
  ioc_.stop();
}

// ---- the server ----------------------------------------------------------------

HttpServer::HttpServer(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics, HttpOptions opts)
    : engine_(engine), model_(model), metrics_(metrics), opts_(std::move(opts)), guard_(opts_.access, opts_.host),
      conversation_ids_{ParseLimits{}.max_conversation_bytes,
                        opts_.trust_client_conversation_ids || (opts_.access.keys && opts_.access.keys->enabled())},
      prepare_(std::make_unique<PreparePool>(opts_.prepare)),
      tenant_limits_(std::make_unique<TenantLimits>(opts_.tenant_limits)),
      completions_(engine, model, metrics, conversation_ids_, *prepare_, *tenant_limits_),
      tokenize_(model, *prepare_, metrics) {
  if (opts_.threads < 1) fail("--http-threads must be >= 1");
  if (opts_.max_connections < 1) fail("--max-connections must be >= 1");
  auto error_response = [this](const ApiError& e) {
    metrics_.count_rejected(e.status());
    HttpResponse res;
    send_error(res, e);
    return res;
  };
  // From the head alone, before any body byte is read (server/session.h).
  auto admit = [this, error_response](HttpRequest& req) -> std::optional<HttpResponse> {
    try {
      guard_.admit(req);
      return std::nullopt;
    } catch (const ApiError& e) {
      return error_response(e);
    }
  };
  auto handle = [this](HttpRequest& req, HttpResponse& res) {
    try {
      if (!router_.dispatch(req, res)) send_error(res, route_not_found_error(req.method, req.path));
    } catch (const ApiError& e) {
      metrics_.count_rejected(e.status());
      send_error(res, e);
    } catch (const std::exception& e) {
      metrics_.count_rejected(500);
      res = HttpResponse{};
      send_error(res, internal_error(e.what()));
    }
  };
  ConnectionServices::HoldTenant hold_tenant;
  if (tenant_limits_->counts_connections())
    hold_tenant = [this](const std::string& tenant) -> std::shared_ptr<void> {
      // Keyless connections (no keys, or /health probes) share --max-connections only.
      if (tenant == kAnonymousTenant) return nullptr;
      return tenant_limits_->connect(tenant);
    };
  transport_ = std::make_unique<Transport>(opts_, admit, handle, error_response, std::move(hold_tenant));
  metrics_.registry()
      .gauge("seer_info", "Constant 1, labelled with the served model and scheduling policy.",
             {{"model", model_.served_name}, {"policy", opts_.policy}})
      .set(1);
  add_routes();
}

HttpServer::~HttpServer() {
  prepare_.reset();  // its workers post to connections of the transport
}

int HttpServer::open_connections() const { return transport_->connections(); }

void HttpServer::add_routes() {
  router_.Get("/health", [this](const HttpRequest&, HttpResponse& res) {
    bool ok = !draining_.load() && engine_.accepting() && !engine_.failed();
    res.status = ok ? 200 : 503;
    if (!ok) res.set_header("Retry-After", "1");
    nlohmann::json body = {{"status", ok ? "ok" : (engine_.failed() ? "failed" : "shutting_down")},
                           {"model", model_.served_name},
                           {"policy", opts_.policy},
                           {"requests_in_flight", engine_.num_in_flight()}};
    if (!opts_.replica_name.empty()) body["replica"] = opts_.replica_name;
    res.set_content(dump_json(body), "application/json");
  });
  router_.Get("/v1/models", [this](const HttpRequest&, HttpResponse& res) {
    res.set_content(dump_json(models_list({model_.served_name}, 0, model_.max_model_len)), "application/json");
  });
  router_.Get(R"(/v1/models/(.+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (req.matches[1] != model_.served_name) return send_error(res, model_not_found_error(req.matches[1]));
    res.set_content(dump_json(models_list({model_.served_name}, 0, model_.max_model_len)["data"][0]),
                    "application/json");
  });
  router_.Post("/tokenize", [this](const HttpRequest& req, HttpResponse& res) { tokenize_.tokenize(req, res); });
  router_.Post("/detokenize", [this](const HttpRequest& req, HttpResponse& res) { tokenize_.detokenize(req, res); });
  router_.Get("/props", [this](const HttpRequest&, HttpResponse& res) {
    res.set_content(dump_json(server_props()), "application/json");
  });
  router_.Get("/metrics", [this](const HttpRequest&, HttpResponse& res) {
    res.set_content(metrics_.render(), "text/plain; version=0.0.4; charset=utf-8");
  });
  auto completion = [this](Endpoint endpoint) {
    return [this, endpoint](const HttpRequest& req, HttpResponse& res) {
      if (draining_.load()) {
        metrics_.count_rejected(503);
        return send_error(res, shutting_down_error());
      }
      completions_.handle(req, res, endpoint);
    };
  };
  router_.Post("/v1/completions", completion(Endpoint::Completions));
  router_.Post("/v1/chat/completions", completion(Endpoint::ChatCompletions));
  router_.Delete(R"(/v1/conversations/([^/]+))", [this](const HttpRequest& req, HttpResponse& res) {
    try {  // a load balancer routes the DELETE by its X-Conversation-Id header, which must agree
      const std::string id =
          resolve_existing_conversation_id(req.matches[1], req.get_header_value(kConversationHeader), conversation_ids_);
      handle_delete_conversation(engine_, req.tenant, id, res);
    } catch (const ApiError& e) {
      metrics_.count_rejected(e.status());
      send_error(res, e);
    }
  });
  add_live_view_routes(router_, metrics_, model_, opts_.policy);
}

nlohmann::json HttpServer::server_props() const {
  nlohmann::json props = {{"model", model_.served_name},
                          {"max_model_len", model_.max_model_len},
                          {"n_ctx", model_.max_model_len},  // llama-server's name
                          {"kv_capacity_tokens", model_.kv_capacity_tokens},
                          {"vocab_size", model_.vocab_size},
                          {"policy", opts_.policy},
                          {"chat_template", model_.chat_template.source()},
                          {"reasoning_format", model_.reasoning.separates() ? "separate" : "none"},
                          {"prepare_threads", opts_.prepare.threads},
                          {"http_threads", opts_.threads}};
  if (!opts_.replica_name.empty()) props["replica"] = opts_.replica_name;
  return props;
}

int HttpServer::bind() {
  opts_.port = transport_->bind(opts_.host, opts_.port);
  return opts_.port;
}

bool HttpServer::serve() { return transport_->run(opts_.threads); }

void HttpServer::stop(std::chrono::milliseconds grace) {
  draining_.store(true);
  engine_.shutdown(grace);
  // Aborted streams still have their last chunk and [DONE] to write.
  const auto deadline = std::chrono::steady_clock::now() + grace + std::chrono::seconds(1);
  while ((completions_.active_responses() > 0 || transport_->writes_in_flight() > 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  transport_->stop();
}

}  // namespace seer::server
