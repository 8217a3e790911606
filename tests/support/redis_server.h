#pragma once
// A `redis-server` child process on a free loopback port for the shared KV tier's
// tests (header-only so any test area can use it). Waits for readiness with a
// deadline (PING answered), never a fixed sleep. Tests skip when redis-server is
// not installed (scripts/install-deps.sh installs it).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>

namespace seer::testing {

inline std::string redis_server_binary() {
  for (const char* p : {"/usr/bin/redis-server", "/usr/local/bin/redis-server", "/usr/sbin/redis-server"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

inline int free_loopback_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  socklen_t len = sizeof a;
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) == 0)
    port = ntohs(a.sin_port);
  close(fd);
  return port;
}

// True when something on 127.0.0.1:port answers PING with +PONG.
inline bool redis_answers(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  inet_pton(AF_INET, "127.0.0.1", &a.sin_addr);
  timeval tv{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  bool ok = false;
  if (connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0 && write(fd, "PING\r\n", 6) == 6) {
    char buf[16] = {};
    ok = read(fd, buf, sizeof buf - 1) >= 5 && std::string(buf).rfind("+PONG", 0) == 0;
  }
  close(fd);
  return ok;
}

class RedisServer {
 public:
  // Starts redis-server (no persistence) on a free port and waits up to 20 s for it.
  RedisServer() {
    const std::string bin = redis_server_binary();
    if (bin.empty()) return;
    port_ = free_loopback_port();
    const std::string port = std::to_string(port_);
    std::vector<std::string> args = {bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                                     "--maxmemory", "256mb", "--maxmemory-policy", "allkeys-lru", "--loglevel",
                                     "warning"};
    std::vector<char*> argv;
    for (auto& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      if (std::freopen("/dev/null", "w", stdout)) {
      }
      execv(argv[0], argv.data());
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (!(up_ = redis_answers(port_)) && std::chrono::steady_clock::now() < deadline &&
           waitpid(pid_, nullptr, WNOHANG) == 0)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));  // polling with a deadline
  }
  ~RedisServer() { stop(); }
  RedisServer(const RedisServer&) = delete;
  RedisServer& operator=(const RedisServer&) = delete;

  bool up() const { return up_; }
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  // SIGKILL, and waits for the exit.
  void stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
    up_ = false;
  }

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  bool up_ = false;
};

}  // namespace seer::testing
