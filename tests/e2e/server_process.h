#pragma once
// A `seer serve` child process on 127.0.0.1 with a port it picked itself (--port 0,
// read back from its stdout), plus small HTTP helpers for the end-to-end tests.
#include <sys/types.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace seer::e2e {

// The tiny random model (made once per test binary with `seer make-model`).
const std::string& tiny_model();
// The same shape with a 16k context: requests long enough (~thousands of tokens)
// to still be running when a test acts on them.
const std::string& tiny_long_context_model();

class ServerProcess {
 public:
  // Starts `seer serve --model MODEL --port 0 EXTRA...` and waits until it listens
  // and /health answers. Fails the test (ADD_FAILURE) and leaves port() == 0 when it
  // does not come up.
  ServerProcess(const std::string& model, const std::vector<std::string>& extra = {});
  ~ServerProcess();  // SIGKILL if still running
  ServerProcess(const ServerProcess&) = delete;
  ServerProcess& operator=(const ServerProcess&) = delete;

  int port() const { return port_; }
  bool up() const { return port_ > 0; }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }
  pid_t pid() const { return pid_; }
  // Sends `sig` and waits up to `timeout_s` for the exit; returns the exit code,
  // or nullopt if it did not exit in time (or died of a signal).
  std::optional<int> signal_and_wait(int sig, double timeout_s);
  // Everything the server wrote to stderr so far.
  std::string stderr_text() const;

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  std::string stderr_path_;
};

// Header lines in order; a name may repeat.
using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpResult {
  int status = 0;  // 0: no response
  std::string body;
  std::string content_type;
  Headers headers;  // the response's

  // The first response header named `name` (case-insensitive), or "".
  std::string header(const std::string& name) const;
  bool has_header(const std::string& name) const;
};

HttpResult http_get(int port, const std::string& path);
HttpResult http_post(int port, const std::string& path, const std::string& body,
                     const std::string& content_type = "application/json");
// Any method and path with the request headers given (repeated names are sent
// repeated; a Host header replaces the default 127.0.0.1:port). The client library
// adds Content-Type: text/plain to a body sent without one: use e2e/raw_http.h to
// send none at all.
HttpResult http_request(int port, const std::string& method, const std::string& path, const std::string& body = "",
                        const Headers& headers = {});
// {"Authorization", "Bearer KEY"}, plus Content-Type: application/json.
Headers bearer(const std::string& key);
// Sends raw bytes on a fresh connection and returns whatever comes back before the
// server closes it (or `timeout_s` passes).
std::string raw_exchange(int port, const std::string& bytes, double timeout_s = 5);

// The value of an unlabelled (or exactly labelled) series in /metrics; nullopt if absent.
// `headers`: what /metrics needs to answer (an API key).
std::optional<double> metric(int port, const std::string& series, const Headers& headers = {});

// SSE data payloads of a complete stream body.
std::vector<std::string> sse_data(const std::string& body);

// Runs a shell command and returns its stdout (and exit status).
std::string run_command(const std::string& cmd, int* status = nullptr);

}  // namespace seer::e2e
