#include "e2e/node_client.h"

#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {

namespace {

std::string node_dir() { return seer::testing::source_dir() + "/tests/e2e/node"; }

}  // namespace

std::string node_client_missing(std::initializer_list<std::string_view> packages) {
  int status = 0;
  run_command("node --version", &status);
  if (status != 0) return "node is not installed";
  for (std::string_view p : packages)
    if (!std::filesystem::exists(node_dir() + "/node_modules/" + std::string(p)))
      return "tests/e2e/node/node_modules lacks " + std::string(p) + "; run `npm ci --prefix tests/e2e/node`";
  return "";
}

nlohmann::json run_node_client(const std::string& script, const std::vector<std::string>& args) {
  std::string cmd = "node " + node_dir() + "/" + script;
  for (const std::string& a : args) cmd += " '" + a + "'";
  int status = 0;
  const std::string out = run_command(cmd + " 2>&1", &status);
  const size_t brace = out.find('{');
  nlohmann::json j = brace == std::string::npos ? nlohmann::json() : nlohmann::json::parse(out.substr(brace), nullptr, false);
  if (status != 0 || !j.is_object()) {
    ADD_FAILURE() << script << " exited with " << status << ":\n" << out;
    return nullptr;
  }
  return j;
}

}  // namespace seer::e2e
