#pragma once
// The scale-out recipe (deploy/start.sh, docs/deploy.md) as a child process of a test,
// and requests through its balancer: shared by the deploy and shared-KV end-to-end
// tests.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "support/redis_server.h"
#include "support/test_paths.h"

namespace seer::e2e {

using namespace std::chrono_literals;

inline std::string haproxy_binary() {
  for (const char* p : {"/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

struct Replica {
  std::string name;
  int port = 0;
  pid_t pid = 0;
};

// deploy/start.sh N as a child process, stopped (SIGTERM, which it passes on) at the end.
class Deployment {
 public:
  // redis_port > 0: the recipe also starts a redis-server there (SEER_REDIS_PORT) and
  // gives the replicas --shared-kv. expect_up = false: a recipe that is meant to stop
  // at start-up (see exit_code() and start_log()).
  Deployment(int replicas, const std::string& model, const std::vector<std::string>& serve_flags,
             int redis_port = 0, bool expect_up = true) {
    static int counter = 0;
    dir_ = seer::testing::scratch_dir() + "/deploy-" + std::to_string(++counter);
    std::filesystem::create_directories(dir_);
    lb_port_ = seer::testing::free_loopback_port();
    std::vector<std::string> args = {"/bin/bash", seer::testing::source_dir() + "/deploy/start.sh",
                                     std::to_string(replicas), "--model", model};
    args.insert(args.end(), serve_flags.begin(), serve_flags.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string log = dir_ + "/start.log";
    setenv("SEER_BIN", seer::testing::seer_binary().c_str(), 1);
    setenv("SEER_LB_PORT", std::to_string(lb_port_).c_str(), 1);
    setenv("SEER_DEPLOY_DIR", dir_.c_str(), 1);
    setenv("HAPROXY", haproxy_binary().c_str(), 1);
    if (redis_port > 0) setenv("SEER_REDIS_PORT", std::to_string(redis_port).c_str(), 1);
    else unsetenv("SEER_REDIS_PORT");
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f) dup2(fileno(stdout), STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const bool ready = wait_until([&] { return std::filesystem::exists(dir_ + "/ready") || exited(); }, 120s);
    if (!ready || pid_ < 0) {
      if (expect_up) ADD_FAILURE() << "deploy/start.sh did not come up:\n" << read_file(log);
      return;
    }
    std::ifstream tsv(dir_ + "/replicas.tsv");
    for (std::string name; tsv >> name;) {
      Replica r{name};
      tsv >> r.port >> r.pid;
      if (name == "redis") redis_ = r;
      else if (name != "haproxy") replicas_.push_back(r);
    }
    up_ = static_cast<int>(replicas_.size()) == replicas;
  }

  ~Deployment() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    if (wait_until([&] { return exited(); }, 60s)) return;
    for (const Replica& r : replicas_) kill(r.pid, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  bool up() const { return up_; }
  int exit_code() const { return exit_code_; }  // -1 while the recipe runs (or after a signal)
  std::string start_log() const { return read_file(dir_ + "/start.log"); }  // its stdout and stderr
  int lb_port() const { return lb_port_; }
  std::string lb_url() const { return "http://127.0.0.1:" + std::to_string(lb_port_); }
  const std::vector<Replica>& replicas() const { return replicas_; }
  const Replica& redis() const { return redis_; }  // pid 0 without one
  const Replica& replica(const std::string& name) const {
    for (const Replica& r : replicas_)
      if (r.name == name) return r;
    throw std::runtime_error("no replica " + name);
  }
  std::string log(const std::string& name) const { return read_file(dir_ + "/" + name + ".err"); }

 private:
  // Reaps the recipe when it has exited (then pid_ < 0 and exit_code_ is its status).
  bool exited() {
    int status = 0;
    if (pid_ <= 0 || waitpid(pid_, &status, WNOHANG) != pid_) return pid_ < 0;
    pid_ = -1;
    exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return true;
  }
  static std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  pid_t pid_ = -1;
  int exit_code_ = -1;
  int lb_port_ = 0;
  bool up_ = false;
  std::vector<Replica> replicas_;
  Replica redis_;
};

struct LbResponse {
  int status = 0;       // 0: no response
  std::string replica;  // X-Seer-Replica, set by HAProxy
  std::string body;
};

// Sends one request (with Connection: close) to the balancer and reads the answer.
inline LbResponse lb_send(int port, const std::string& request) {
  LbResponse out;
  const std::string raw =
      raw_exchange(port, request, std::chrono::duration_cast<std::chrono::duration<double>>(kWaitLimit).count());
  const size_t head_end = raw.find("\r\n\r\n");
  if (raw.rfind("HTTP/1.", 0) != 0 || head_end == std::string::npos) return out;
  out.status = std::stoi(raw.substr(9, 3));
  out.body = raw.substr(head_end + 4);
  std::istringstream head(raw.substr(0, head_end));
  for (std::string line; std::getline(head, line);) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    const std::string key = "x-seer-replica: ";
    std::string lower = line.substr(0, key.size());
    for (char& c : lower) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (lower == key) out.replica = line.substr(key.size());
  }
  return out;
}

// POST /v1/completions through the balancer, with X-Conversation-Id when given.
inline LbResponse lb_post(int port, const std::string& body, const std::string& conversation) {
  std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    "Content-Type: application/json\r\n";
  if (!conversation.empty()) req += "X-Conversation-Id: " + conversation + "\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return lb_send(port, req);
}

inline std::string completion_body(const std::string& prompt, int max_tokens) {
  return nlohmann::json{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}}.dump();
}

inline double cache_hits(const Replica& r) {
  const std::string labels = "{replica=\"" + r.name + "\",tier=";
  return metric(r.port, "seer_cache_hit_tokens_total" + labels + "\"device\"}").value_or(0) +
         metric(r.port, "seer_cache_hit_tokens_total" + labels + "\"host\"}").value_or(0);
}

inline bool gone(const Replica& r) { return http_get(r.port, "/health").status == 0; }

// HAProxy's view of a replica (its stats page, CSV): "UP", "DOWN", ...
inline std::string lb_status(const Deployment& d, const Replica& r) {
  std::istringstream csv(
      lb_send(d.lb_port(), "GET /lb-stats;csv HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n").body);  // 1.0: not chunked
  for (std::string line; std::getline(csv, line);) {
    if (line.rfind("replicas," + r.name + ",", 0) != 0) continue;
    std::vector<std::string> cols;
    std::istringstream fields(line);
    for (std::string f; std::getline(fields, f, ',');) cols.push_back(f);
    return cols.size() > 17 ? cols[17] : "";  // column 17: status
  }
  return "";
}

// The replica running a request now, or "" (polled by the caller).
inline std::string running_replica(const Deployment& d) {
  for (const Replica& r : d.replicas())
    if (metric(r.port, "seer_requests_running{replica=\"" + r.name + "\"}").value_or(0) >= 1) return r.name;
  return "";
}

}  // namespace seer::e2e
