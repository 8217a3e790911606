#include "server/http_request_reader.h"

#include <algorithm>
#include <cctype>

namespace seer::server {

namespace http = boost::beast::http;

namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The members of every field named `name`, in order, trimmed and lower-cased; an
// empty member (", ,") is kept, as "".
std::vector<std::string> list_members(const BeastRequest& head, http::field name) {
  std::vector<std::string> members;
  for (const auto& f : head) {
    if (f.name() != name) continue;
    std::string_view rest(f.value().data(), f.value().size());
    for (;;) {
      const size_t comma = rest.find(',');
      std::string m(trim(rest.substr(0, comma)));
      std::transform(m.begin(), m.end(), m.begin(), [](unsigned char c) { return std::tolower(c); });
      members.push_back(std::move(m));
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
  }
  return members;
}

ApiError framing_error(int status, const char* code, std::string message) {
  return ApiError(status, "invalid_request_error", "", code, message);
}

std::optional<ApiError> transfer_coding_error(const BeastRequest& head) {
  const std::vector<std::string> codings = list_members(head, http::field::transfer_encoding);
  if (codings.empty()) return std::nullopt;
  if (head.version() < 11)
    return framing_error(400, "bad_transfer_encoding", "Transfer-Encoding is not allowed in an HTTP/1.0 request");
  if (head.find(http::field::content_length) != head.end())
    return framing_error(400, "bad_transfer_encoding", "a request must not have both Transfer-Encoding and Content-Length");
  for (size_t i = 0; i < codings.size(); ++i) {
    if (codings[i].empty()) return framing_error(400, "bad_transfer_encoding", "Transfer-Encoding has an empty coding");
    if (codings[i] == "chunked" && i + 1 < codings.size())
      return framing_error(400, "bad_transfer_encoding", "chunked must be the last transfer coding, and only once");
  }
  for (const std::string& coding : codings)
    if (coding != "chunked")
      return framing_error(501, "unsupported_transfer_coding",
                           "the only transfer coding supported is 'chunked' (got '" + coding.substr(0, 64) + "')");
  return std::nullopt;
}

std::optional<ApiError> expectation_error(const BeastRequest& head) {
  for (const std::string& member : list_members(head, http::field::expect))
    if (member != "100-continue")
      return ApiError(417, "invalid_request_error", "", "expectation_failed",
                      "the only expectation supported is 'Expect: 100-continue'");
  return std::nullopt;
}

}  // namespace

void configure_parser(BeastRequestParser& parser, size_t max_body_bytes) {
  parser.header_limit(kHeaderLimit);
  parser.body_limit(max_body_bytes);
}

void ObsFoldScan::feed(std::string_view consumed) {
  for (const char c : consumed) {
    if (at_line_start_ && (c == ' ' || c == '\t')) found_ = true;
    at_line_start_ = last_ == '\r' && c == '\n';
    last_ = c;
  }
}

std::optional<ApiError> head_error(const BeastRequest& head, const ObsFoldScan& fold) {
  if (fold.found())
    return framing_error(400, "obsolete_line_folding", "header fields must not be folded over lines (RFC 9112 §5.2)");
  if (auto e = transfer_coding_error(head)) return e;
  return expectation_error(head);
}

bool expects_continue(const BeastRequest& head) {
  return head.version() >= 11 && head.find(http::field::expect) != head.end();
}

bool has_body(const BeastRequestParser& parser) {
  return parser.chunked() || parser.content_length().value_or(0) > 0;
}

HttpRequest request_of_head(const BeastRequest& head, std::string remote_addr) {
  HttpRequest req;
  req.method = std::string(head.method_string());
  const std::string target(head.target());
  req.path = target.substr(0, target.find('?'));
  for (const auto& f : head) req.headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
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
    boost::beast::error_code ec;
    const size_t head_used = parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more) return out;  // an incomplete last request
    if (ec) {
      out.error_status = parse_error_status(ec);
      return out;
    }
    ObsFoldScan fold;
    fold.feed(bytes.substr(0, head_used));
    if (auto refused = head_error(parser.get(), fold)) {
      out.error_status = refused->status();
      return out;
    }
    HttpRequest req = request_of_head(parser.get(), "");
    bytes.remove_prefix(head_used);
    parser.eager(true);
    const size_t body_used = parser.is_done() ? 0 : parser.put(boost::asio::buffer(bytes.data(), bytes.size()), ec);
    if (ec == http::error::need_more || (!ec && !parser.is_done())) return out;
    if (ec) {
      out.error_status = parse_error_status(ec);
      return out;
    }
    bytes.remove_prefix(body_used);
    req.body = std::move(parser.get().body());
    out.requests.push_back(std::move(req));
  }
  return out;
}

}  // namespace seer::server
