// The README's first command, scripts/quickstart.sh, ends with a server answering
// /v1/chat/completions with the built-in model (here with --no-deps, the test's own
// build directory and a free port; docs/serving.md times it from a clean clone).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

TEST(Quickstart, FirstCommandServesTheBuiltinModel) {
  const std::string build_dir = std::filesystem::path(seer::testing::seer_binary()).parent_path().string();
  const std::string script = seer::testing::source_dir() + "/scripts/quickstart.sh";
  int out[2];
  ASSERT_EQ(pipe(out), 0);
  std::vector<std::string> args = {"/bin/bash", script, "--no-deps", "--build-dir", build_dir, "--port", "0"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string err_path = seer::testing::scratch_dir() + "/quickstart.err";
  pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    dup2(out[1], STDOUT_FILENO);
    int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
    close(out[0]);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(out[1]);
  // Everything on stdout until the curl line (the build's output comes first).
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(300);
  char buf[4096];
  while (std::chrono::steady_clock::now() < deadline && text.find("curl -N") == std::string::npos) {
    pollfd p{out[0], POLLIN, 0};
    if (poll(&p, 1, 200) <= 0) continue;
    ssize_t n = read(out[0], buf, sizeof buf);
    if (n <= 0) break;
    text.append(buf, static_cast<size_t>(n));
  }
  const auto at = text.find("listening on http://127.0.0.1:");
  int port = 0;
  if (at != std::string::npos) port = std::stoi(text.substr(at + std::string("listening on http://127.0.0.1:").size()));
  EXPECT_GT(port, 0) << text;
  EXPECT_NE(text.find("curl -N http://127.0.0.1:"), std::string::npos) << text;
  if (port > 0) {
    HttpResult r = http_post(port, "/v1/chat/completions",
                             R"({"messages": [{"role": "user", "content": "Tell me a story"}], "max_tokens": 24})");
    EXPECT_EQ(r.status, 200) << r.body;
    auto j = nlohmann::json::parse(r.body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << r.body;
    EXPECT_EQ(j["model"], "stories260K");
    EXPECT_FALSE(j["choices"][0]["message"]["content"].get<std::string>().empty());
  }
  std::string err;
  {
    std::ifstream in(err_path);
    std::stringstream ss;
    ss << in.rdbuf();
    err = ss.str();
  }
  EXPECT_NE(err.find("using the built-in model"), std::string::npos) << err;
  kill(-pid, SIGTERM);
  int status = 0;
  waitpid(pid, &status, 0);
  close(out[0]);
}

}  // namespace
}  // namespace seer::e2e
