#pragma once
// Runs the seer binary (SEER_BINARY) with arguments, capturing exit code, stdout and
// stderr through files in the scratch directory.
#include <spawn.h>
#include <sys/wait.h>

#include <fcntl.h>
#include <atomic>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "support/test_paths.h"

extern char** environ;

namespace seer::testing {

struct RunResult {
  int exit_code = -1;  // -1: did not exit normally (signal)
  std::string out, err;
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline RunResult run_seer(const std::vector<std::string>& args) {
  static std::atomic<int> counter{0};
  const std::string base = scratch_dir() + "/run" + std::to_string(counter++);
  const std::string out_path = base + ".out", err_path = base + ".err";
  std::vector<std::string> argv_s = {seer_binary()};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& a : argv_s) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&fa, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  RunResult r;
  int rc = posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    r.err = "posix_spawn failed for " + argv_s[0];
    return r;
  }
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
  r.out = slurp(out_path);
  r.err = slurp(err_path);
  return r;
}

}  // namespace seer::testing
