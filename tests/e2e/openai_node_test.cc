// The official `openai` npm client against `seer serve` (tests/e2e/node; install with
// `npm ci --prefix tests/e2e/node`). Skips when node or the package is missing.
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

TEST(OpenAiNodeClient, ChatAndCompletionsStreamingAndNot) {
  const std::string dir = seer::testing::source_dir() + "/tests/e2e/node";
  if (!std::filesystem::exists(dir + "/node_modules/openai"))
    GTEST_SKIP() << "tests/e2e/node/node_modules is missing; run `npm ci --prefix tests/e2e/node`";
  int status = 0;
  run_command("node --version", &status);
  if (status != 0) GTEST_SKIP() << "node is not installed";
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess server(tiny_model(), {"--served-model-name", "tiny-random"});
  ASSERT_TRUE(server.up());

  std::string out = run_command("node " + dir + "/openai_client.mjs " + server.url() + " tiny-random 2>&1", &status);
  ASSERT_EQ(status, 0) << out;
  json j = json::parse(out.substr(out.find('{')));

  EXPECT_EQ(j["chat"]["object"], "chat.completion");
  EXPECT_EQ(j["chat"]["role"], "assistant");
  EXPECT_TRUE(j["chat"]["content"].is_string());
  EXPECT_EQ(j["chat"]["finish_reason"], "length");
  EXPECT_EQ(j["chat"]["usage"]["completion_tokens"], 6);

  EXPECT_EQ(j["chat_stream"]["role"], "assistant");
  EXPECT_GE(j["chat_stream"]["chunks"].get<int>(), 3);
  EXPECT_EQ(j["chat_stream"]["finish_reason"], "length");
  EXPECT_EQ(j["chat_stream"]["usage"]["completion_tokens"], 6);

  EXPECT_EQ(j["completion"]["object"], "text_completion");
  EXPECT_EQ(j["completion"]["finish_reason"], "length");
  EXPECT_EQ(j["completion"]["usage"]["completion_tokens"], 5);

  EXPECT_GE(j["completion_stream"]["chunks"].get<int>(), 2);
  EXPECT_EQ(j["completion_stream"]["finish_reason"], "length");

  ASSERT_TRUE(j["error"].is_object());
  EXPECT_EQ(j["error"]["status"], 400);
  EXPECT_EQ(j["error"]["param"], "max_tokens");
  EXPECT_EQ(j["error"]["type"], "invalid_request_error");

  EXPECT_EQ(j["models"], json::array({"tiny-random"}));
}

}  // namespace
}  // namespace seer::e2e
