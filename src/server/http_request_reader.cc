#include "server/http_request_reader.h"

namespace seer::server {

namespace http = boost::beast::http;

void configure_parser(BeastRequestParser& parser, size_t max_body_bytes) {
  parser.header_limit(kHeaderLimit);
  parser.body_limit(max_body_bytes);
}

HttpRequest to_http_request(BeastRequest&& msg, std::string remote_addr) {
  HttpRequest req;
  req.method = std::string(msg.method_string());
  const std::string target(msg.target());
  req.path = target.substr(0, target.find('?'));
  req.body = std::move(msg.body());
  for (const auto& f : msg) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  req.remote_addr = std::move(remote_addr);
  return req;
}

int parse_error_status(const boost::beast::error_code& ec) {
  if (ec == http::error::body_limit) return 413;
  if (ec == http::error::header_limit) return 431;
  if (ec.category() == http::make_error_code(http::error::bad_method).category() && ec != http::error::end_of_stream &&
      ec != http::error::partial_message && ec != http::error::need_more)
    return 400;
  return 0;
}

ParsedRequests parse_http_requests(std::string_view bytes, size_t max_body_bytes) {
  ParsedRequests out;
  while (!bytes.empty()) {
    BeastRequestParser parser;
    configure_parser(parser, max_body_bytes);
    parser.eager(true);
    boost::beast::error_code ec;
    const size_t used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more || (!ec && !parser.is_done())) return out;  // an incomplete last request
    if (ec) {
      out.error_status = parse_error_status(ec);
      return out;
    }
    bytes.remove_prefix(used);
    out.requests.push_back(to_http_request(parser.release(), ""));
  }
  return out;
}

}  // namespace seer::server
