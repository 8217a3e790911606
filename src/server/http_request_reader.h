#pragma once
// From bytes on a connection to the HttpRequest a handler sees: Boost.Beast's parser
// with seer's limits, the checks a request's head must pass before any body byte is
// read (RFC 9112 framing, Expect), and the conversion of its message. One place, used
// by the transport (server/session.cc) and by the HTTP fuzz target (fuzz/fuzz_http.cc).
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>

#include "server/api_error.h"
#include "server/http_message.h"

namespace seer::server {

inline constexpr size_t kHeaderLimit = 64 << 10;

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastRequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A parser with seer's header and body limits.
void configure_parser(BeastRequestParser& parser, size_t max_body_bytes);

// Watches a request's head for obs-fold (a field continued on a line that starts
// with a space or tab) as the parser consumes it: in pieces, field by field while it
// arrives. Beast unfolds obs-fold without leaving a trace in the fields.
class ObsFoldScan {
 public:
  void feed(std::string_view consumed);
  bool found() const { return found_; }

 private:
  bool found_ = false;
  bool at_line_start_ = false;  // the bytes fed so far end with CRLF
  char last_ = 0;
};

// Why a request cannot be read past its head, or nullopt. Refused: obs-fold (400); Transfer-Encoding beside Content-Length, in HTTP/1.0, empty, or
// with `chunked` anywhere but once at the end (400); any coding but `chunked`
// (501: the body's length cannot be known, so nothing after it can be read as a
// request); an Expect other than 100-continue (417). Every one closes the connection.
std::optional<ApiError> head_error(const BeastRequest& head, const ObsFoldScan& fold);

// `Expect: 100-continue` on an HTTP/1.1 request (HTTP/1.0 ignores it, RFC 9110 §10.1.1).
bool expects_continue(const BeastRequest& head);

// Whether a body follows the head (chunked, or a Content-Length above 0).
bool has_body(const BeastRequestParser& parser);

// The request a handler sees, from its head's fields: the body is added once read,
// and chunked trailer fields never become headers (RFC 9110 §6.5.1).
HttpRequest request_of_head(const BeastRequest& head, std::string remote_addr);

// The HTTP status a parse error is answered with (400, 413, 431), or 0 when the
// connection just ended (end of stream, a partial message).
int parse_error_status(const boost::beast::error_code& ec);

// Every complete request in `bytes`, parsed as one keep-alive connection would be;
// `error_status` is the status the first malformed or refused one gets (0: none).
struct ParsedRequests {
  std::vector<HttpRequest> requests;
  int error_status = 0;
};
ParsedRequests parse_http_requests(std::string_view bytes, size_t max_body_bytes);

}  // namespace seer::server
