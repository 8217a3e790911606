#pragma once
// The npm clients of the end-to-end tests (tests/e2e/node/*.mjs; `npm ci --prefix
// tests/e2e/node`): a check that node and the packages are there (tests skip with a
// message otherwise) and a runner that returns the one JSON object a client prints.
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace seer::e2e {

// Why the clients cannot run: "node is not installed" or the first of `packages`
// missing from tests/e2e/node/node_modules; "" when they can.
std::string node_client_missing(std::initializer_list<std::string_view> packages);

// Runs `node tests/e2e/node/SCRIPT ARGS...` and returns the JSON object it printed
// (from its first '{'). A nonzero exit or output that is not JSON fails the test
// (ADD_FAILURE with the output) and returns null.
nlohmann::json run_node_client(const std::string& script, const std::vector<std::string>& args);

}  // namespace seer::e2e

// Skips the test (with the reason) unless node and every package named are installed.
#define SEER_REQUIRE_NODE_PACKAGES(...)                                                        \
  if (const std::string seer_node_missing = ::seer::e2e::node_client_missing({__VA_ARGS__});  \
      !seer_node_missing.empty())                                                              \
  GTEST_SKIP() << seer_node_missing
