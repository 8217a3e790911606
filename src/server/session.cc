#include "server/session.h"

#include <algorithm>
#include <array>
#include <deque>
#include <memory>
#include <vector>

#include <boost/asio.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "server/http_request_reader.h"

namespace seer::server {

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using Strand = net::any_io_executor;  // a strand: sockets are accepted onto their own

namespace {

constexpr size_t kReadChunk = 4096;
// After a last response: how long, and how many bytes, the rest of what the client
// sends is read and dropped before the connection closes.
constexpr double kLingerSeconds = 2;
constexpr size_t kLingerBytes = 64 << 10;
constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";

std::chrono::steady_clock::duration seconds(double s) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double>(s));
}

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
  Session(ConnectionServices& s, tcp::socket socket)
      : s_(s), socket_(std::move(socket)), strand_(socket_.get_executor()), timer_(strand_) {}
  ~Session() {
    if (channel_) channel_->close(response_done_);  // no request outlives its connection
    s_.connections.fetch_sub(1);
  }
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  void start() { read_header(s_.opts.header_timeout_s); }

  // Called by Channel (on the strand).
  void send_whole(HttpResponse res) {
    if (closed_ || response_done_) return;
    out_.push_back(format_head(res.status, res.content_type, res.headers, res.body.size(), keep_alive_) + res.body);
    response_started_ = response_done_ = true;
    do_write();
    if (channel_) channel_->release();  // after do_write: the write is counted before the producer goes
  }
  void start_stream(int status, const std::string& content_type, const HttpHeaders& headers) {
    if (closed_ || response_done_) return;
    out_.push_back(format_head(status, content_type, headers, std::nullopt, keep_alive_));
    response_started_ = true;
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
    timer_.expires_after(seconds(s_.opts.body_timeout_s));
    timer_.async_wait([self = shared_from_this(), gen](const beast::error_code& ec) {
      if (ec || gen != self->timer_gen_ || self->closed_) return;
      self->body_timed_out_ = true;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    });
  }

  void read_header(double timeout_s) {
    parser_.emplace();
    configure_parser(*parser_, s_.opts.max_body_bytes);
    fold_ = ObsFoldScan{};
    response_started_ = response_done_ = probed_ = false;
    channel_.reset();
    arm(timeout_s);
    read_head();
  }

  // Feeds what has arrived to the parser, and reads on until the head is complete.
  // (The parser takes a head field by field as it arrives; each piece is scanned
  // for obs-fold before it is dropped.)
  void read_head() {
    beast::error_code ec;
    const size_t used = parser_->put(buffer_.data(), ec);
    fold_.feed({static_cast<const char*>(buffer_.data().data()), used});
    buffer_.consume(used);
    if (ec != http::error::need_more) return ec ? fail(ec) : on_head();
    if (peer_done_sending_) return close();  // a partial head, or none, and no more to come
    socket_.async_read_some(buffer_.prepare(kReadChunk),
                            [self = shared_from_this()](const beast::error_code& ec, size_t n) {
                              self->buffer_.commit(n);
                              if (ec) return self->fail(ec);
                              self->read_head();
                            });
  }

  // Everything that refuses a request is decided here, before a byte of its body is
  // read; "100 Continue" only once it passed.
  void on_head() {
    const BeastRequest& head = parser_->get();
    keep_alive_ = head.keep_alive();
    http11_ = head.version() >= 11;
    if (std::optional<ApiError> refused = head_error(head, fold_)) {
      keep_alive_ = false;
      return send_whole(s_.error_response(*refused));
    }
    beast::error_code ignored;
    const auto peer = socket_.remote_endpoint(ignored);
    request_ = request_of_head(head, ignored ? "" : peer.address().to_string());
    if (std::optional<HttpResponse> refusal = s_.admit(request_)) {
      if (has_body(*parser_)) keep_alive_ = false;  // its body is never read
      return send_whole(std::move(*refusal));
    }
    if (s_.hold_tenant && (!tenant_hold_ || held_tenant_ != request_.tenant)) {
      try {
        tenant_hold_ = s_.hold_tenant(request_.tenant);  // a key of another tenant moves the hold
        held_tenant_ = request_.tenant;
      } catch (const ApiError& e) {
        keep_alive_ = false;
        return send_whole(s_.error_response(e));
      }
    }
    if (parser_->is_done()) return on_request({});
    if (expects_continue(head)) {
      out_.emplace_back(kContinue);
      do_write();
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
    response_done_ = false;
    send_whole(s_.error_response(transport_error(status, s_.opts)));
  }

  void on_request(const beast::error_code& ec) {
    if (ec) return fail(ec);
    disarm();
    HttpRequest req = std::move(request_);
    req.body = std::move(parser_->get().body());  // the head's fields only: trailer fields are dropped
    HttpResponse res;
    res.make_channel = [this] {
      channel_ = std::make_shared<Channel>(weak_from_this(), strand_);
      return channel_;
    };
    s_.handler(req, res);
    if (!res.deferred()) return send_whole(std::move(res));
    watch_peer();
  }

  // While a deferred response is produced, reads on: a client that resets the
  // connection is noticed at once (its request is aborted), and what it pipelined
  // behind this request waits in buffer_ for its turn. A peek cannot do this:
  // pipelined bytes would hide the reset behind them. More than one whole request's
  // worth of pipelined bytes closes the connection (after aborting this request).
  void watch_peer() {
    if (watching_ || closed_) return;
    if (peer_done_sending_) return await_reset();
    const size_t cap = kHeaderLimit + s_.opts.max_body_bytes;
    if (buffer_.size() >= cap) return close();
    watching_ = true;
    socket_.async_read_some(buffer_.prepare(std::min<size_t>(kReadChunk, cap - buffer_.size())),
                            [self = shared_from_this()](const beast::error_code& ec, size_t n) {
                              self->watching_ = false;
                              if (!ec) self->buffer_.commit(n);
                              if (ec == net::error::eof) self->peer_done_sending_ = true;
                              else if (ec && ec != net::error::operation_aborted) return self->close();
                              self->after_watch();
                            });
  }

  // The client has sent its last byte (EOF): a half-close, or a close, which TCP
  // tells apart only once the client is sent something: a closed socket answers with
  // a reset. A stream's chunks are that probe; a response not yet started gets a
  // "100 Continue" ahead of it (HTTP/1.1 clients skip 1xx responses they did not
  // expect, RFC 9110 §15.2; none goes to HTTP/1.0). The reset shows as an error on
  // the socket, and aborts the request.
  void await_reset() {
    if (!response_started_ && http11_ && !probed_) {
      probed_ = true;
      out_.emplace_back(kContinue);
      do_write();
    }
    watching_ = true;
    socket_.async_wait(tcp::socket::wait_error, [self = shared_from_this()](const beast::error_code& ec) {
      self->watching_ = false;
      if (!ec) return self->close();
      self->after_watch();
    });
  }

  void after_watch() {
    if (closed_) return;
    if (!response_done_) return watch_peer();
    if (!writing_) next_request();  // else on_written() comes back to it
  }

  // The response is written: the next request on this connection, if any.
  void next_request() {
    if (watching_) {  // its completion comes back here
      beast::error_code ignored;
      socket_.cancel(ignored);
      return;
    }
    if (!keep_alive_) return linger_close();
    read_header(s_.opts.keep_alive_timeout_s);
  }

  void do_write() {
    if (writing_ || out_.empty() || closed_) return;
    writing_ = true;
    s_.writes_in_flight.fetch_add(1);
    arm(s_.opts.write_timeout_s);
    net::async_write(socket_, net::buffer(out_.front()),
                     [self = shared_from_this()](const beast::error_code& ec, size_t) { self->on_written(ec); });
  }

  void on_written(const beast::error_code& ec) {
    writing_ = false;
    s_.writes_in_flight.fetch_sub(1);
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
  // sends (e.g. the rest of a refused body), for a bounded time and number of bytes,
  // so that closing does not reset the connection before the client has read the
  // response.
  void linger_close() {
    beast::error_code ignored;
    socket_.shutdown(tcp::socket::shutdown_send, ignored);
    arm(kLingerSeconds);
    discard();
  }
  void discard() {
    if (discarded_ >= kLingerBytes) return close();
    socket_.async_read_some(net::buffer(discard_), [self = shared_from_this()](const beast::error_code& ec, size_t n) {
      if (ec) return self->close();
      self->discarded_ += n;
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

  ConnectionServices& s_;
  // Everything below is used on the strand only.
  tcp::socket socket_;
  Strand strand_;
  net::steady_timer timer_;
  uint64_t timer_gen_ = 0;
  beast::flat_buffer buffer_;
  std::optional<BeastRequestParser> parser_;
  ObsFoldScan fold_;
  HttpRequest request_;  // the current request's head, once admitted
  std::shared_ptr<void> tenant_hold_;  // its tenant's connection share (ConnectionServices::hold_tenant)
  std::string held_tenant_;
  std::shared_ptr<Channel> channel_;
  std::deque<std::string> out_;
  bool writing_ = false;
  bool keep_alive_ = true;
  bool http11_ = true;
  bool response_started_ = false;  // its head is queued
  bool response_done_ = false;
  bool closed_ = false;
  bool body_timed_out_ = false;
  bool watching_ = false;            // a watch_peer() read or an await_reset() wait is pending
  bool peer_done_sending_ = false;   // the client's EOF arrived
  bool probed_ = false;              // await_reset() sent its "100 Continue"
  size_t discarded_ = 0;
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

}  // namespace

void start_session(ConnectionServices& services, tcp::socket socket) {
  services.connections.fetch_add(1);
  std::make_shared<Session>(services, std::move(socket))->start();
}

ApiError transport_error(int status, const HttpOptions& opts) {
  switch (status) {
    case 413:
      return body_too_large_error(opts.max_body_bytes);
    case 408:
      return ApiError(408, "invalid_request_error", "", "request_timeout",
                      fmt::format("the request body did not arrive within {} s", opts.body_timeout_s));
    case 503:
      return ApiError(503, "server_error", "", "too_many_connections",
                      fmt::format("more than {} connections are open; retry later", opts.max_connections));
    default:
      return ApiError(status, status >= 500 ? "server_error" : "invalid_request_error", "", "http_error",
                      fmt::format("the request failed with HTTP status {}", status));
  }
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

}  // namespace seer::server
