#pragma once
// From bytes on a connection to the HttpRequest a handler sees: Boost.Beast's parser
// with seer's limits, and the conversion of its message. One place, used by the
// transport (server/http_server.cc) and by the HTTP fuzz target (fuzz/fuzz_http.cc).
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include <boost/beast/http.hpp>

#include "server/http_message.h"

namespace seer::server {

inline constexpr size_t kHeaderLimit = 64 << 10;

using BeastRequest = boost::beast::http::request<boost::beast::http::string_body>;
using BeastRequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// A parser with seer's header and body limits.
void configure_parser(BeastRequestParser& parser, size_t max_body_bytes);

HttpRequest to_http_request(BeastRequest&& msg, std::string remote_addr);

// The HTTP status a parse error is answered with (400, 413, 431), or 0 when the
// connection just ended (end of stream, a partial message).
int parse_error_status(const boost::beast::error_code& ec);

// Every complete request in `bytes`, parsed as one keep-alive connection would be;
// `error_status` is the status the first malformed one gets (0: none).
struct ParsedRequests {
  std::vector<HttpRequest> requests;
  int error_status = 0;
};
ParsedRequests parse_http_requests(std::string_view bytes, size_t max_body_bytes);

}  // namespace seer::server
