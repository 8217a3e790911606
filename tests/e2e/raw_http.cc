#include "e2e/raw_http.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <optional>

namespace seer::e2e {

namespace {

bool same_name(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

std::string trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return std::string(s);
}

// A chunked body starting at `at`: the decoded body and the offset past its end,
// or nullopt while incomplete.
std::optional<std::pair<std::string, size_t>> read_chunked(std::string_view bytes, size_t at) {
  std::string body;
  for (;;) {
    const size_t eol = bytes.find("\r\n", at);
    if (eol == std::string_view::npos) return std::nullopt;
    const size_t size = std::stoul(std::string(bytes.substr(at, eol - at)), nullptr, 16);
    at = eol + 2;
    if (size == 0) {  // trailer lines, then an empty line
      const size_t end = bytes.find("\r\n", at);
      if (end == std::string_view::npos) return std::nullopt;
      if (end == at) return std::make_pair(body, end + 2);
      at = end + 2;
      continue;
    }
    if (bytes.size() < at + size + 2) return std::nullopt;
    body.append(bytes.substr(at, size));
    at += size + 2;
  }
}

}  // namespace

std::string request_bytes(int port, const std::string& method, const std::string& path, const std::string& body,
                          const Headers& headers) {
  std::string out = method + " " + path + " HTTP/1.1\r\n";
  const bool has_host =
      std::any_of(headers.begin(), headers.end(), [](const auto& h) { return same_name(h.first, "Host"); });
  if (!has_host) out += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  for (const auto& [name, value] : headers) out += name + ": " + value + "\r\n";
  if (!body.empty() || method == "POST") out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  return out + "\r\n" + body;
}

std::string RawResponse::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (same_name(k, name)) return v;
  return "";
}

bool RawResponse::has_header(const std::string& name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return same_name(h.first, name); });
}

std::vector<RawResponse> parse_responses(std::string_view bytes) {
  std::vector<RawResponse> out;
  size_t at = 0;
  for (;;) {
    const size_t head_end = bytes.find("\r\n\r\n", at);
    if (head_end == std::string_view::npos) return out;
    RawResponse r;
    std::string_view head = bytes.substr(at, head_end - at);
    const size_t first_eol = std::min(head.find("\r\n"), head.size());
    std::string_view status_line = head.substr(0, first_eol);
    if (status_line.rfind("HTTP/1.", 0) != 0 || status_line.size() < 12) return out;
    r.status = std::stoi(std::string(status_line.substr(9, 3)));
    for (size_t line = first_eol + 2; line < head.size();) {
      const size_t eol = std::min(head.find("\r\n", line), head.size());
      std::string_view l = head.substr(line, eol - line);
      const size_t colon = l.find(':');
      if (colon != std::string_view::npos) r.headers.emplace_back(trim(l.substr(0, colon)), trim(l.substr(colon + 1)));
      line = eol + 2;
    }
    size_t next = head_end + 4;
    if (same_name(r.header("Transfer-Encoding"), "chunked")) {
      auto chunked = read_chunked(bytes, next);
      if (!chunked) return out;
      r.body = std::move(chunked->first);
      next = chunked->second;
    } else if (r.status >= 200 && r.status != 204 && r.status != 304) {
      const std::string length = r.header("Content-Length");
      const size_t n = length.empty() ? 0 : std::stoul(length);
      if (bytes.size() < next + n) return out;
      r.body = std::string(bytes.substr(next, n));
      next += n;
    }
    at = next;
    if (r.status >= 200) out.push_back(std::move(r));
  }
}

RawConnection::RawConnection(int port) {
  fd_ = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (fd_ >= 0 && connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) close();
}

RawConnection::~RawConnection() { close(); }

bool RawConnection::send_all(const std::string& bytes) {
  size_t sent = 0;
  while (fd_ >= 0 && sent < bytes.size()) {
    const ssize_t n = ::send(fd_, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) return false;
    sent += static_cast<size_t>(n);
  }
  return fd_ >= 0;
}

bool RawConnection::read_some(int timeout_ms) {
  if (fd_ < 0 || server_closed_) return false;
  pollfd p{fd_, POLLIN, 0};
  if (poll(&p, 1, timeout_ms) <= 0) return true;
  char buf[8192];
  const ssize_t n = recv(fd_, buf, sizeof buf, 0);
  if (n <= 0) {
    server_closed_ = true;
    return false;
  }
  received_.append(buf, static_cast<size_t>(n));
  return true;
}

std::vector<RawResponse> RawConnection::read_responses(size_t count, std::chrono::milliseconds limit) {
  std::vector<RawResponse> got;
  wait_until(
      [&] {
        const bool open = read_some(static_cast<int>(kPollInterval.count()));
        got = parse_responses(received_);
        return got.size() >= count || !open;
      },
      limit);
  return got;
}

bool RawConnection::wait_closed(std::chrono::milliseconds limit) {
  return wait_until([&] { return !read_some(static_cast<int>(kPollInterval.count())); }, limit) && server_closed_;
}

void RawConnection::shutdown_send() {
  if (fd_ >= 0) ::shutdown(fd_, SHUT_WR);
}

void RawConnection::close() {
  if (fd_ < 0) return;
  ::close(fd_);
  fd_ = -1;
}

}  // namespace seer::e2e
