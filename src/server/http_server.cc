#include "server/http_server.h"

#include <algorithm>
#include <array>
#include <deque>
#include <optional>
#include <thread>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "common/error.h"
#include "common/thread_name.h"
#include "server/api_error.h"
#include "server/conversation_handler.h"
#include "server/conversation_id.h"
#include "server/http_request_reader.h"
#include "server/live_view.h"

namespace seer::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Strand = net::any_io_executor;  // a strand: sockets are accepted onto their own

namespace {

constexpr int kListenBacklog = 4096;
constexpr double kLingerSeconds = 2;

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

std::string format_head(int status, const std::string& content_type, const HttpHeaders& headers,
                        std::optional<size_t> content_length, bool keep_alive) {
  std::string h = fmt::format("HTTP/1.1 {} {}\r\n", status, std::string(http::obsolete_reason(http::int_to_status(
                                                                 static_cast<unsigned>(status)))));
  if (!content_type.empty()) h += "Content-Type: " + content_type + "\r\n";
  for (const auto& [k, v] : headers) h += k + ": " + v + "\r\n";
  if (content_length) h += fmt::format("Content-Length: {}\r\n", *content_length);
  else h += "Transfer-Encoding: chunked\r\n";
  h += keep_alive ? "Connection: keep-alive\r\n\r\n" : "Connection: close\r\n\r\n";
  return h;
}

}  // namespace

// ---- transport ----------------------------------------------------------------

class HttpServer::Transport {
 public:
  using Handler = std::function<void(HttpRequest&, HttpResponse&)>;
  using ErrorResponse = std::function<HttpResponse(int status)>;

  Transport(const HttpOptions& opts, Handler handler, ErrorResponse error_response, ServerMetrics& metrics)
      : opts_(opts), handler_(std::move(handler)), error_response_(std::move(error_response)), metrics_(metrics),
        acceptor_(ioc_) {}

  int bind(const std::string& host, int port);
  bool run(int threads);
  void stop();
  int connections() const { return connections_.load(); }

  // Set at construction.
  const HttpOptions& opts_;
  Handler handler_;
  ErrorResponse error_response_;
  ServerMetrics& metrics_;
  // Asio objects are used from the I/O threads only (stop() posts).
  net::io_context ioc_;
  tcp::acceptor acceptor_;
  std::atomic<int> connections_{0};
  std::atomic<int> writes_in_flight_{0};
  std::atomic<bool> failed_{false};

 private:
  void accept();
  void reject_busy(tcp::socket socket);
};

class Session;

// The ResponseChannel of one deferred response; all state lives on the strand.
class Channel final : public ResponseChannel {
 public:
  Channel(std::weak_ptr<Session> session, Strand strand) : session_(std::move(session)), strand_(std::move(strand)) {}

  void post(std::function<void()> fn) override {
    net::post(strand_, [w = session_, fn = std::move(fn)] {
      if (!w.expired()) fn();
    });
  }
  void respond(HttpResponse res) override;
  void start_stream(int status, const std::string& content_type, const HttpHeaders& headers) override;
  void write(std::string chunk) override;
  void finish() override;
  bool closed() const override { return closed_; }
  void on_close(std::function<void()> fn) override { on_close_ = std::move(fn); }
  void attach(std::shared_ptr<void> owner) override { owners_.push_back(std::move(owner)); }

  // The connection ended before the response did (or after: then only releases).
  void close(bool response_done) {
    if (closed_) return;
    closed_ = true;
    auto fn = std::move(on_close_);
    if (fn && !response_done) fn();
    owners_.clear();
  }
  void release() { owners_.clear(); }

 private:
  std::weak_ptr<Session> session_;
  Strand strand_;
  bool closed_ = false;
  std::function<void()> on_close_;
  std::vector<std::shared_ptr<void>> owners_;
};

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(HttpServer::Transport& t, tcp::socket socket)
      : t_(t), socket_(std::move(socket)), strand_(socket_.get_executor()), timer_(strand_) {}
  ~Session() {
    if (channel_) channel_->close(response_done_);  // no request outlives its connection
    t_.connections_.fetch_sub(1);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { read_header(t_.opts_.header_timeout_s); }

  // Called by Channel (on the strand).
  void send_whole(HttpResponse res) {
    if (closed_ || response_done_) return;
    out_.push_back(format_head(res.status, res.content_type, res.headers, res.body.size(), keep_alive_) + res.body);
    response_done_ = true;
    do_write();
    if (channel_) channel_->release();  // after do_write: the write is counted before the producer goes
  }
  void start_stream(int status, const std::string& content_type, const HttpHeaders& headers) {
    if (closed_ || response_done_) return;
    out_.push_back(format_head(status, content_type, headers, std::nullopt, keep_alive_));
    do_write();
  }
  void write_chunk(const std::string& chunk) {
    if (closed_ || response_done_ || chunk.empty()) return;
    out_.push_back(fmt::format("{:x}\r\n", chunk.size()) + chunk + "\r\n");
    do_write();
  }
  void finish_stream() {
    if (closed_ || response_done_) return;
    out_.push_back("0\r\n\r\n");
    response_done_ = true;
    do_write();
    if (channel_) channel_->release();
  }

 private:
  // Closes the socket when `s` passes before the current phase ends.
  // (A generation number, since a cancelled wait may already be queued as expired.)
  void arm(double s) {
    const uint64_t gen = ++timer_gen_;
    timer_.expires_after(seconds(s));
    timer_.async_wait([self = shared_from_this(), gen](const beast::error_code& ec) {
      if (!ec && gen == self->timer_gen_) self->close();
    });
  }
  void disarm() {
    ++timer_gen_;
    timer_.cancel();
  }
  // The body phase: a client that stops sending gets 408 rather than a silent close
  // (the read is cancelled; fail() answers).
  void arm_body() {
    const uint64_t gen = ++timer_gen_;
    timer_.expires_after(seconds(t_.opts_.body_timeout_s));
    timer_.async_wait([self = shared_from_this(), gen](const beast::error_code& ec) {
      if (ec || gen != self->timer_gen_ || self->closed_) return;
      self->body_timed_out_ = true;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void read_header(double timeout_s) {
    parser_.emplace();
    configure_parser(*parser_, t_.opts_.max_body_bytes);
    response_done_ = false;
    channel_.reset();
    arm(timeout_s);
    http::async_read_header(socket_, buffer_, *parser_,
                            [self = shared_from_this()](const beast::error_code& ec, size_t) { self->on_header(ec); });
  }

  void on_header(const beast::error_code& ec) {
    if (ec) return fail(ec);
    auto& req = parser_->get();
    keep_alive_ = req.keep_alive();
    if (beast::iequals(req[http::field::expect], "100-continue")) {
      out_.push_back("HTTP/1.1 100 Continue\r\n\r\n");
      do_write(/*final=*/false);
    }
    arm_body();
    http::async_read(socket_, buffer_, *parser_,
                     [self = shared_from_this()](const beast::error_code& ec, size_t) { self->on_request(ec); });
  }

  void fail(const beast::error_code& ec) {
    if (closed_) return;
    if (body_timed_out_) return reply_error(408);
    if (const int status = parse_error_status(ec)) return reply_error(status);
    close();  // end of stream, reset, timeout (the timer closed the socket)
  }

  void reply_error(int status) {
    keep_alive_ = false;
    HttpResponse res = t_.error_response_(status);
    t_.metrics_.count_rejected(status);
    response_done_ = false;
    send_whole(std::move(res));
  }

  void on_request(const beast::error_code& ec) {
    if (ec) return fail(ec);
    disarm();
    beast::error_code ignored;
    auto ep = socket_.remote_endpoint(ignored);
    HttpRequest req = to_http_request(parser_->release(), ignored ? "" : ep.address().to_string());
    HttpResponse res;
    res.make_channel = [this] {
      channel_ = std::make_shared<Channel>(weak_from_this(), strand_);
      return channel_;
    };
    t_.handler_(req, res);
    if (!res.deferred()) return send_whole(std::move(res));
    watch_peer();
  }

  // While a deferred response is produced, reads on: a client that hangs up is
  // noticed at once (its request is aborted), and what it pipelined behind this
  // request waits in buffer_ for its turn. A peek cannot do this: pipelined bytes
  // would hide the hang-up behind them. More than one whole request's worth of
  // pipelined bytes closes the connection (after aborting this request).
  void watch_peer() {
    if (watching_ || closed_) return;
    const size_t cap = kHeaderLimit + t_.opts_.max_body_bytes;
    if (buffer_.size() >= cap) return close();
    watching_ = true;
    socket_.async_read_some(buffer_.prepare(std::min<size_t>(4096, cap - buffer_.size())),
                            [self = shared_from_this()](const beast::error_code& ec, size_t n) {
                              self->watching_ = false;
                              if (!ec) self->buffer_.commit(n);
                              if (ec && ec != net::error::operation_aborted) return self->close();
                              if (self->closed_) return;
                              if (self->response_done_) return self->next_request();
                              self->watch_peer();
                            });
  }

  // The response is written: the next request on this connection, if any.
  void next_request() {
    if (watching_) {  // its completion comes back here
      beast::error_code ignored;
      socket_.cancel(ignored);
      return;
    }
    if (!keep_alive_) return linger_close();
    read_header(t_.opts_.keep_alive_timeout_s);
  }

  void do_write(bool final = true) {
    if (writing_ || out_.empty() || closed_) return;
    writing_ = true;
    t_.writes_in_flight_.fetch_add(1);
    arm(t_.opts_.write_timeout_s);
    net::async_write(socket_, net::buffer(out_.front()),
                     [self = shared_from_this()](const beast::error_code& ec, size_t) { self->on_written(ec); });
  }

  void on_written(const beast::error_code& ec) {
    writing_ = false;
    t_.writes_in_flight_.fetch_sub(1);
    disarm();
    if (ec) return close();
    out_.pop_front();
    if (!out_.empty()) return do_write();
    if (!response_done_) {
      // Still reading a body after "100 Continue", or streaming: that phase's timer.
      if (!channel_ && parser_ && !parser_->is_done()) arm_body();
      return;
    }
    next_request();
  }

  // After a last response: stop sending, then read and drop what the client still
  // sends (e.g. the rest of a refused body) until it closes, so that closing does
  // not reset the connection before the client has read the response.
  void linger_close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(kLingerSeconds);
    discard();
  }
  void discard() {
    socket_.async_read_some(net::buffer(discard_), [self = shared_from_this()](const beast::error_code& ec, size_t) {
      if (ec) return self->close();
      self->discard();
    });
  }

  void close() {
    if (closed_) return;
    closed_ = true;
    beast::error_code ignored;
    disarm();
    socket_.shutdown(tcp::socket::shutdown_both, ignored);
    socket_.close(ignored);
    if (channel_) channel_->close(response_done_);
    channel_.reset();
  }

  HttpServer::Transport& t_;
  // Everything below is used on the strand only.
  tcp::socket socket_;
  Strand strand_;
  net::steady_timer timer_;
  uint64_t timer_gen_ = 0;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  std::shared_ptr<Channel> channel_;
  std::deque<std::string> out_;
  bool writing_ = false;
  bool keep_alive_ = true;
  bool response_done_ = false;
  bool closed_ = false;
  bool body_timed_out_ = false;
  bool watching_ = false;  // a watch_peer() read is pending
  std::array<char, 4096> discard_;
};

void Channel::respond(HttpResponse res) {
  if (auto s = session_.lock()) s->send_whole(std::move(res));
}
void Channel::start_stream(int status, const std::string& content_type, const HttpHeaders& headers) {
  if (auto s = session_.lock()) s->start_stream(status, content_type, headers);
}
void Channel::write(std::string chunk) {
  if (auto s = session_.lock()) s->write_chunk(chunk);
}
void Channel::finish() {
  if (auto s = session_.lock()) s->finish_stream();
}

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
      if (connections_.load() >= opts_.max_connections) {
        reject_busy(std::move(socket));
      } else {
        connections_.fetch_add(1);
        std::make_shared<Session>(*this, std::move(socket))->start();
      }
    }
    accept();
  });
}

// Beyond max_connections: a 503 and close, without reading the request.
void HttpServer::Transport::reject_busy(tcp::socket socket) {
  metrics_.count_rejected(503);
  HttpResponse res = error_response_(503);
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

// ---- routing -------------------------------------------------------------------

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

// ---- the server ----------------------------------------------------------------

HttpServer::HttpServer(AsyncEngine& engine, const ModelInfo& model, ServerMetrics& metrics, HttpOptions opts)
    : engine_(engine), model_(model), metrics_(metrics), opts_(std::move(opts)), guard_(opts_.access, opts_.host),
      conversation_ids_{ParseLimits{}.max_conversation_bytes,
                        opts_.trust_client_conversation_ids || (opts_.access.keys && opts_.access.keys->enabled())},
      completions_(engine, model, metrics, conversation_ids_) {
  if (opts_.threads < 1) fail("--http-threads must be >= 1");
  if (opts_.max_connections < 1) fail("--max-connections must be >= 1");
  auto handle = [this](HttpRequest& req, HttpResponse& res) {
    try {
      guard_.admit(req);
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
  auto error_response = [this](int status) {
    HttpResponse res;
    if (status == 413) send_error(res, body_too_large_error(opts_.max_body_bytes));
    else if (status == 408) send_error(res, ApiError(408, "invalid_request_error", "", "request_timeout",
                                                     fmt::format("the request body did not arrive within {} s",
                                                                 opts_.body_timeout_s)));
    else if (status == 503) send_error(res, ApiError(503, "server_error", "", "too_many_connections",
                                                     fmt::format("more than {} connections are open; retry later",
                                                                 opts_.max_connections)));
    else send_error(res, ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", "",
                                  "http_error", fmt::format("the request failed with HTTP status {}", status)));
    return res;
  };
  transport_ = std::make_unique<Transport>(opts_, handle, error_response, metrics_);
  metrics_.registry()
      .gauge("seer_info", "Constant 1, labelled with the served model and scheduling policy.",
             {{"model", model_.served_name}, {"policy", opts_.policy}})
      .set(1);
  add_routes();
}

HttpServer::~HttpServer() = default;

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
    res.set_content(dump_json(models_list({model_.served_name}, 0)), "application/json");
  });
  router_.Get(R"(/v1/models/(.+))", [this](const HttpRequest& req, HttpResponse& res) {
    if (req.matches[1] != model_.served_name) return send_error(res, model_not_found_error(req.matches[1]));
    res.set_content(dump_json(models_list({model_.served_name}, 0)["data"][0]), "application/json");
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
  while ((completions_.active_responses() > 0 || transport_->writes_in_flight_.load() > 0) &&
         std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  transport_->stop();
}

}  // namespace seer::server
