#include "e2e/server_process.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <httplib.h>

#include "bench/sse_parser.h"
#include "e2e/wait.h"
#include "support/test_paths.h"

namespace seer::e2e {

namespace {

std::string make_model(const std::string& name, const std::string& flags) {
  std::string p = seer::testing::scratch_dir() + "/" + name;
  int status = 0;
  run_command(seer::testing::seer_binary() + " make-model --shape tiny --type f32 --quiet " + flags + " --out " + p,
              &status);
  return status == 0 ? p : "";
}

}  // namespace

const std::string& tiny_model() {
  static const std::string path = make_model("tiny.gguf", "");
  return path;
}

const std::string& tiny_long_context_model() {
  static const std::string path = make_model("tiny-16k.gguf", "--context 16384");
  return path;
}

ServerProcess::ServerProcess(const std::string& model, const std::vector<std::string>& extra) {
  static int counter = 0;
  stderr_path_ = seer::testing::scratch_dir() + "/serve-" + std::to_string(++counter) + ".err";
  int out[2];
  if (pipe(out) != 0) {
    ADD_FAILURE() << "pipe failed";
    return;
  }
  std::vector<std::string> args = {seer::testing::seer_binary(), "serve", "--model", model, "--port", "0"};
  args.insert(args.end(), extra.begin(), extra.end());
  // Everything the child needs is prepared before fork (no allocation after it).
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const char* err_path = stderr_path_.c_str();
  pid_ = fork();
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  // The first stdout line names the port.
  std::string line;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  char c;
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    if (read(out[0], &c, 1) != 1) break;
    if (c == '\n') break;
    line += c;
  }
  close(out[0]);
  auto colon = line.rfind(':');
  if (line.find("listening on") == std::string::npos || colon == std::string::npos) {
    ADD_FAILURE() << "seer serve did not start: '" << line << "'\n" << stderr_text();
    return;
  }
  port_ = std::stoi(line.substr(colon + 1));
  if (wait_until([&] { return http_get(port_, "/health").status == 200; })) return;
  ADD_FAILURE() << "seer serve never answered /health\n" << stderr_text();
  port_ = 0;
}

ServerProcess::~ServerProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
}

std::optional<int> ServerProcess::signal_and_wait(int sig, double timeout_s) {
  if (pid_ <= 0) return std::nullopt;
  kill(pid_, sig);
  std::optional<int> code;
  const bool exited = wait_until(
      [&] {
        int status = 0;
        if (waitpid(pid_, &status, WNOHANG) != pid_) return false;
        if (WIFEXITED(status)) code = WEXITSTATUS(status);
        return true;
      },
      std::chrono::milliseconds(static_cast<int64_t>(timeout_s * 1000)));
  if (exited) pid_ = -1;
  return code;
}

std::string ServerProcess::stderr_text() const {
  std::ifstream in(stderr_path_);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

namespace {

HttpResult from(const httplib::Result& r) {
  HttpResult out;
  if (!r) return out;
  out.status = r->status;
  out.body = r->body;
  out.content_type = r->get_header_value("Content-Type");
  for (const auto& [name, value] : r->headers) out.headers.emplace_back(name, value);
  return out;
}

httplib::Client client(int port) {
  httplib::Client c("127.0.0.1", port);
  c.set_connection_timeout(5, 0);
  c.set_read_timeout(120, 0);
  return c;
}

}  // namespace

HttpResult http_get(int port, const std::string& path) { return from(client(port).Get(path.c_str())); }

HttpResult http_post(int port, const std::string& path, const std::string& body, const std::string& content_type) {
  return from(client(port).Post(path.c_str(), body, content_type.c_str()));
}

HttpResult http_request(int port, const std::string& method, const std::string& path, const std::string& body,
                        const Headers& headers) {
  httplib::Request req;
  req.method = method;
  req.path = path;
  req.body = body;
  for (const auto& [name, value] : headers) req.headers.emplace(name, value);
  return from(client(port).send(req));
}

Headers bearer(const std::string& key) {
  return {{"Authorization", "Bearer " + key}, {"Content-Type", "application/json"}};
}

namespace {

bool same_name(const std::string& a, const std::string& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::string HttpResult::header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (same_name(k, name)) return v;
  return "";
}

bool HttpResult::has_header(const std::string& name) const {
  for (const auto& [k, v] : headers)
    if (same_name(k, name)) return true;
  return false;
}

std::string raw_exchange(int port, const std::string& bytes, double timeout_s) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    close(fd);
    return "";
  }
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n <= 0) break;
    sent += static_cast<size_t>(n);
  }
  shutdown(fd, SHUT_WR);
  std::string out;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd p{fd, POLLIN, 0};
    if (poll(&p, 1, 100) <= 0) continue;
    ssize_t n = recv(fd, buf, sizeof buf, 0);
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  close(fd);
  return out;
}

std::optional<double> metric(int port, const std::string& series, const Headers& headers) {
  HttpResult r = http_request(port, "GET", "/metrics", "", headers);
  std::istringstream in(r.body);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

std::vector<std::string> sse_data(const std::string& body) { return seer::bench::SseParser().feed(body); }

std::string run_command(const std::string& cmd, int* status) {
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) {
    if (status) *status = -1;
    return out;
  }
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
  int st = pclose(p);
  if (status) *status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return out;
}

}  // namespace seer::e2e
