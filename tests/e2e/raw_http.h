#pragma once
// Raw HTTP/1.1 on one loopback connection, for what a client library hides:
// pipelined requests in one write, a body shorter than its Content-Length, a POST
// without Content-Type, a connection that goes away while its request runs, one that
// half-closes after sending.
// Reads wait with a deadline (e2e/wait.h), never a fixed sleep.
#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "e2e/server_process.h"
#include "e2e/wait.h"

namespace seer::e2e {

// One request as bytes: the request line, Host: 127.0.0.1:PORT (unless `headers`
// names a Host), `headers`, Content-Length when there is a body, the body.
std::string request_bytes(int port, const std::string& method, const std::string& path, const std::string& body = "",
                          const Headers& headers = {{"Content-Type", "application/json"}});

struct RawResponse {
  int status = 0;
  Headers headers;
  std::string body;  // de-chunked

  // The first header named `name` (case-insensitive), or "".
  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const;
};

// The complete responses at the start of `bytes`, in order (bodies by
// Content-Length or chunked; 1xx interim responses left out). An incomplete
// last response is left out too.
std::vector<RawResponse> parse_responses(std::string_view bytes);

class RawConnection {
 public:
  // Connects to 127.0.0.1:port; ok() is false when that failed.
  explicit RawConnection(int port);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool ok() const { return fd_ >= 0; }
  // Sends all of `bytes` (one send() call for anything the socket buffer takes at once).
  bool send_all(const std::string& bytes);
  // Reads until `count` complete responses arrived, the server closed, or `limit`
  // passed; returns the complete responses received so far.
  std::vector<RawResponse> read_responses(size_t count, std::chrono::milliseconds limit = kWaitLimit);
  // Reads until the server closes the connection or `limit` passes; true when it closed.
  bool wait_closed(std::chrono::milliseconds limit = kWaitLimit);
  // Everything received so far.
  const std::string& received() const { return received_; }
  bool server_closed() const { return server_closed_; }
  // Half-closes: tells the server this side sends no more (shutdown(SHUT_WR), as
  // `nc -N` does) and keeps reading.
  void shutdown_send();
  // Closes the connection from this side (both directions).
  void close();

 private:
  // Waits up to `timeout_ms` for bytes; false once the server closed.
  bool read_some(int timeout_ms);

  int fd_ = -1;
  std::string received_;
  bool server_closed_ = false;
};

}  // namespace seer::e2e
