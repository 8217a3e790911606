// The scale-out recipe (deploy/start.sh, docs/deploy.md) end to end on loopback: three
// `seer serve` replicas behind HAProxy. A conversation's turns stay on one replica
// (cache hits there) and move to another when it dies; a draining replica (SIGTERM)
// finishes its stream while the balancer sends new turns elsewhere; a replica killed
// mid-stream ends that stream with an error instead of a hang. Skips when haproxy is
// not installed (scripts/install-deps.sh installs it).
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "bench/streaming_client.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

std::string haproxy_binary() {
  for (const char* p : {"/usr/sbin/haproxy", "/usr/bin/haproxy", "/usr/local/sbin/haproxy"})
    if (access(p, X_OK) == 0) return p;
  return "";
}

int free_loopback_port() {
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

struct Replica {
  std::string name;
  int port = 0;
  pid_t pid = 0;
};

// deploy/start.sh N as a child process, stopped (SIGTERM, which it passes on) at the end.
class Deployment {
 public:
  Deployment(int replicas, const std::string& model, const std::vector<std::string>& serve_flags) {
    static int counter = 0;
    dir_ = seer::testing::scratch_dir() + "/deploy-" + std::to_string(++counter);
    std::filesystem::create_directories(dir_);
    lb_port_ = free_loopback_port();
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
    pid_ = fork();
    if (pid_ == 0) {
      FILE* f = std::freopen(log.c_str(), "w", stdout);
      if (f) dup2(fileno(stdout), STDERR_FILENO);
      execv(argv[0], argv.data());
      _exit(127);
    }
    const bool ready = wait_until(
        [&] { return std::filesystem::exists(dir_ + "/ready") || waitpid(pid_, nullptr, WNOHANG) == pid_; }, 120s);
    if (!ready || !std::filesystem::exists(dir_ + "/ready")) {
      ADD_FAILURE() << "deploy/start.sh did not come up:\n" << read_file(log);
      return;
    }
    std::ifstream tsv(dir_ + "/replicas.tsv");
    for (std::string name; tsv >> name;) {
      Replica r{name};
      tsv >> r.port >> r.pid;
      if (name != "haproxy") replicas_.push_back(r);
    }
    up_ = static_cast<int>(replicas_.size()) == replicas;
  }

  ~Deployment() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    const bool exited = wait_until([&] { return waitpid(pid_, nullptr, WNOHANG) == pid_; }, 60s);
    if (exited) return;
    for (const Replica& r : replicas_) kill(r.pid, SIGKILL);
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Deployment(const Deployment&) = delete;
  Deployment& operator=(const Deployment&) = delete;

  bool up() const { return up_; }
  int lb_port() const { return lb_port_; }
  std::string lb_url() const { return "http://127.0.0.1:" + std::to_string(lb_port_); }
  const std::vector<Replica>& replicas() const { return replicas_; }
  const Replica& replica(const std::string& name) const {
    for (const Replica& r : replicas_)
      if (r.name == name) return r;
    throw std::runtime_error("no replica " + name);
  }
  std::string log(const std::string& name) const { return read_file(dir_ + "/" + name + ".err"); }

 private:
  static std::string read_file(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string dir_;
  pid_t pid_ = -1;
  int lb_port_ = 0;
  bool up_ = false;
  std::vector<Replica> replicas_;
};

struct LbResponse {
  int status = 0;       // 0: no response
  std::string replica;  // X-Seer-Replica, set by HAProxy
  std::string body;
};

// Sends one request (with Connection: close) to the balancer and reads the answer.
LbResponse lb_send(int port, const std::string& request) {
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
LbResponse lb_post(int port, const std::string& body, const std::string& conversation) {
  std::string req = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n"
                    "Content-Type: application/json\r\n";
  if (!conversation.empty()) req += "X-Conversation-Id: " + conversation + "\r\n";
  req += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return lb_send(port, req);
}

std::string completion_body(const std::string& prompt, int max_tokens) {
  return json{{"prompt", prompt}, {"max_tokens", max_tokens}, {"temperature", 0}}.dump();
}

double cache_hits(const Replica& r) {
  const std::string labels = "{replica=\"" + r.name + "\",tier=";
  return metric(r.port, "seer_cache_hit_tokens_total" + labels + "\"device\"}").value_or(0) +
         metric(r.port, "seer_cache_hit_tokens_total" + labels + "\"host\"}").value_or(0);
}

bool gone(const Replica& r) { return http_get(r.port, "/health").status == 0; }

// HAProxy's view of a replica (its stats page, CSV): "UP", "DOWN", ...
std::string lb_status(const Deployment& d, const Replica& r) {
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
std::string running_replica(const Deployment& d) {
  for (const Replica& r : d.replicas())
    if (metric(r.port, "seer_requests_running{replica=\"" + r.name + "\"}").value_or(0) >= 1) return r.name;
  return "";
}

class DeployE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    if (haproxy_binary().empty()) GTEST_SKIP() << "haproxy is not installed (scripts/install-deps.sh installs it)";
    int status = 0;
    run_command("curl --version > /dev/null 2>&1", &status);
    if (status != 0) GTEST_SKIP() << "curl is not installed (deploy/start.sh needs it)";
  }
};

TEST_F(DeployE2e, ConversationStaysOnOneReplicaAndMovesWhenItDies) {
  ASSERT_FALSE(tiny_model().empty());
  Deployment d(3, tiny_model(), {"--policy", "pensieve", "--swap-blocks", "64"});
  ASSERT_TRUE(d.up());

  LbResponse t1 = lb_post(d.lb_port(), completion_body("Hello", 8), "conv-affinity");
  ASSERT_EQ(t1.status, 200) << t1.body;
  ASSERT_FALSE(t1.replica.empty());
  const Replica& home = d.replica(t1.replica);
  EXPECT_EQ(cache_hits(home), 0);
  LbResponse t2 = lb_post(d.lb_port(), completion_body(" again", 8), "conv-affinity");
  ASSERT_EQ(t2.status, 200) << t2.body;
  EXPECT_EQ(t2.replica, home.name) << "the second turn left the conversation's replica";
  EXPECT_GT(cache_hits(home), 0) << "the second turn did not reuse the first turn's KV";

  // Without the header the balancer spreads requests (round-robin).
  std::set<std::string> spread;
  for (int i = 0; i < 6; ++i) {
    LbResponse r = lb_post(d.lb_port(), completion_body("Hi", 2), "");
    EXPECT_EQ(r.status, 200) << r.body;
    spread.insert(r.replica);
  }
  EXPECT_GE(spread.size(), 2u);

  ASSERT_EQ(kill(home.pid, SIGKILL), 0);
  ASSERT_TRUE(wait_until([&] { return gone(home); }));
  // Its health check fails; from then on the hash sends the conversation elsewhere.
  ASSERT_TRUE(wait_until([&] { return lb_status(d, home).rfind("DOWN", 0) == 0; })) << lb_status(d, home);
  LbResponse t3 = lb_post(d.lb_port(), completion_body(" and then", 8), "conv-affinity");
  ASSERT_EQ(t3.status, 200) << t3.body;
  EXPECT_NE(t3.replica, home.name);
  // The conversation now lives on its new replica: the next turn stays there and hits.
  LbResponse t4 = lb_post(d.lb_port(), completion_body(" the end", 8), "conv-affinity");
  ASSERT_EQ(t4.status, 200) << t4.body;
  EXPECT_EQ(t4.replica, t3.replica);
  EXPECT_GT(cache_hits(d.replica(t4.replica)), 0);

  // DELETE carries the id in its path; with the header the balancer routes it to the
  // conversation's replica (a header naming another conversation is refused).
  const std::string del = "DELETE /v1/conversations/conv-affinity HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  LbResponse mismatch = lb_send(d.lb_port(), del + "X-Conversation-Id: conv-other\r\n\r\n");
  EXPECT_EQ(mismatch.status, 400) << mismatch.body;
  LbResponse deleted = lb_send(d.lb_port(), del + "X-Conversation-Id: conv-affinity\r\n\r\n");
  EXPECT_EQ(deleted.status, 200) << deleted.body;
  EXPECT_EQ(deleted.replica, t4.replica);
}

TEST_F(DeployE2e, DrainingReplicaFinishesItsStreamWhileNewTurnsGoElsewhere) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  Deployment d(3, tiny_long_context_model(), {"--shutdown-timeout", "60"});
  ASSERT_TRUE(d.up());
  WallClock clock;
  bench::ClientResult result;
  std::thread stream([&] {
    bench::ClientRequest r;
    r.prompt = "Hi";
    r.max_tokens = 3000;
    r.conversation = "conv-drain";
    r.timeout_s = 120;
    result = bench::send_streaming(bench::parse_server_url(d.lb_url()), r, clock);
  });
  std::string busy;
  ASSERT_TRUE(wait_until([&] { return !(busy = running_replica(d)).empty(); }));
  const Replica& draining = d.replica(busy);
  ASSERT_EQ(kill(draining.pid, SIGTERM), 0);
  // While it finishes the stream, its health check fails and new requests are refused...
  ASSERT_TRUE(wait_until([&] { return http_get(draining.port, "/health").status != 200; }));
  EXPECT_TRUE(wait_until([&] { return lb_status(d, draining).rfind("DOWN", 0) == 0; })) << lb_status(d, draining);
  // ...and the balancer sends the conversation's next turn to another replica.
  LbResponse next = lb_post(d.lb_port(), completion_body("Hello", 4), "conv-drain");
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_NE(next.replica, draining.name);
  stream.join();
  EXPECT_TRUE(result.ok) << result.error;
  EXPECT_EQ(result.completion_tokens, 3000);
  EXPECT_EQ(result.finish_reason, "length");
  EXPECT_TRUE(wait_until([&] { return gone(draining); }));
  EXPECT_NE(d.log(draining.name).find("SIGTERM received"), std::string::npos);
}

TEST_F(DeployE2e, ReplicaKilledMidStreamEndsTheStreamWithAnError) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  Deployment d(3, tiny_long_context_model(), {});
  ASSERT_TRUE(d.up());
  WallClock clock;
  bench::ClientResult result;
  std::thread stream([&] {
    bench::ClientRequest r;
    r.prompt = "Hi";
    r.max_tokens = 16000;  // seconds on the 16k-context tiny model
    r.conversation = "conv-crash";
    r.timeout_s = 120;     // a hang would end here, with a time-out error
    result = bench::send_streaming(bench::parse_server_url(d.lb_url()), r, clock);
  });
  std::string busy;
  ASSERT_TRUE(wait_until([&] { return !(busy = running_replica(d)).empty(); }));
  const Replica& dead = d.replica(busy);
  ASSERT_EQ(kill(dead.pid, SIGKILL), 0);
  stream.join();
  EXPECT_FALSE(result.ok);
  std::fprintf(stderr, "the stream ended with: %s\n", result.error.c_str());
  EXPECT_LT(result.completion_tokens, 16000);
  EXPECT_EQ(result.error.find("timeout"), std::string::npos) << result.error;
  EXPECT_EQ(result.error.find("Timeout"), std::string::npos) << result.error;
  // The conversation's next turn is served by a surviving replica.
  LbResponse next = lb_post(d.lb_port(), completion_body("Hello", 4), "conv-crash");
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_NE(next.replica, dead.name);
}

}  // namespace
}  // namespace seer::e2e
