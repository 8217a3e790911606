#pragma once
// One HTTP/1.1 connection of the transport (server/http_server.cc), on its own strand:
// reads a request's head, decides from it alone whether the request may go on
// (framing, Expect, then the request guard: server/request_guard.h) so that no
// refused body is ever buffered, reads the body, runs the handler, writes the
// response (whole or chunked, from a ResponseChannel for deferred ones), and reads
// the next request. Each phase has its deadline (HttpOptions).
//
// A connection ends when its client resets it or a write fails: what it started is
// aborted then. The client's end of sending (EOF, a half-close) is no hang-up: the
// response it is owed is still written.
#include <atomic>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>

#include "server/api_error.h"
#include "server/http_message.h"
#include "server/http_options.h"

namespace seer::server {

// What every connection of one transport shares.
struct ConnectionServices {
  // The head's checks beyond framing (the request guard; sets req.tenant): nullopt
  // admits, else the response that refuses it.
  using Admit = std::function<std::optional<HttpResponse>(HttpRequest&)>;
  using Handler = std::function<void(HttpRequest&, HttpResponse&)>;
  // The error response for `e`, counted as a rejection.
  using ErrorResponse = std::function<HttpResponse(const ApiError& e)>;
  // What a connection holds while it acts for a tenant (its share of connections), or
  // throws ApiError when the tenant holds its share already. Empty: not counted.
  using HoldTenant = std::function<std::shared_ptr<void>(const std::string& tenant)>;

  // Set at construction.
  const HttpOptions& opts;
  Admit admit;
  Handler handler;
  ErrorResponse error_response;
  HoldTenant hold_tenant;
  // Shared by the I/O threads.
  std::atomic<int> connections{0};
  std::atomic<int> writes_in_flight{0};
};

// Serves `socket` (accepted onto a strand of its own) until the connection ends;
// counted in `services.connections` until then.
void start_session(ConnectionServices& services, boost::asio::ip::tcp::socket socket);

// The error the transport itself answers with: 400 (malformed), 408 (body too
// slow), 413 (body too large), 431 (head too large), 503 (too many connections).
ApiError transport_error(int status, const HttpOptions& opts);

// A response's status line and header; a chunked body when `content_length` is empty.
std::string format_head(int status, const std::string& content_type, const HttpHeaders& headers,
                        std::optional<size_t> content_length, bool keep_alive);

}  // namespace seer::server
