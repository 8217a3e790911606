// Structured outputs and tool calls through the official `openai` npm client (with
// zod) against `seer serve` on a random-weight model (tests/e2e/node; install with
// `npm ci --prefix tests/e2e/node`). Skips when node or the packages are missing.
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

TEST(OpenAiNodeClient, ZodResponseFormatAndToolCallRoundTrip) {
  const std::string dir = seer::testing::source_dir() + "/tests/e2e/node";
  if (!std::filesystem::exists(dir + "/node_modules/openai") || !std::filesystem::exists(dir + "/node_modules/zod"))
    GTEST_SKIP() << "tests/e2e/node/node_modules lacks openai or zod; run `npm ci --prefix tests/e2e/node`";
  int status = 0;
  run_command("node --version", &status);
  if (status != 0) GTEST_SKIP() << "node is not installed";
  // The tools preamble needs more than the 512-token context of the plain tiny model.
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess server(tiny_long_context_model(), {"--served-model-name", "tiny-random"});
  ASSERT_TRUE(server.up());

  std::string out = run_command("node " + dir + "/structured_client.mjs " + server.url() + " tiny-random 5 2>&1", &status);
  ASSERT_EQ(status, 0) << out;
  json j = json::parse(out.substr(out.find('{')));

  ASSERT_EQ(j["zod"].size(), 5u);
  for (const auto& z : j["zod"]) {
    EXPECT_EQ(z["finish_reason"], "stop") << z;
    EXPECT_TRUE(z["parsed"].get<bool>()) << z;
    EXPECT_TRUE(z["valid"].get<bool>()) << z;
  }
  EXPECT_EQ(j["zod_stream"]["finish_reason"], "stop");
  EXPECT_TRUE(j["zod_stream"]["valid"].get<bool>());

  ASSERT_EQ(j["tools"].size(), 5u);
  for (const auto& t : j["tools"]) {
    EXPECT_EQ(t["finish_reason"], "tool_calls") << t;
    EXPECT_EQ(t["name"], "get_weather") << t;
    EXPECT_EQ(t["type"], "function") << t;
    EXPECT_TRUE(t["id_ok"].get<bool>()) << t;
    EXPECT_TRUE(t["args_valid"].get<bool>()) << t;
    EXPECT_EQ(t["final_finish"], "length") << t;
    EXPECT_TRUE(t["final_is_text"].get<bool>()) << t;
  }
  EXPECT_EQ(j["tool_stream"]["finish_reason"], "tool_calls");
  EXPECT_EQ(j["tool_stream"]["count"], 1);  // parallel_tool_calls: false
  EXPECT_EQ(j["tool_stream"]["name"], "get_weather");
  EXPECT_TRUE(j["tool_stream"]["args_valid"].get<bool>());
}

}  // namespace
}  // namespace seer::e2e
