// Structured outputs and tool calls through the official `openai` npm client (with
// zod) against `seer serve` on a random-weight model (tests/e2e/node; install with
// `npm ci --prefix tests/e2e/node`). Skips when node or the packages are missing.
#include <gtest/gtest.h>

#include "e2e/node_client.h"
#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

TEST(OpenAiNodeClient, ZodResponseFormatAndToolCallRoundTrip) {
  SEER_REQUIRE_NODE_PACKAGES("openai", "zod");
  // The tools preamble needs more than the 512-token context of the plain tiny model.
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess server(tiny_long_context_model(), {"--served-model-name", "tiny-random"});
  ASSERT_TRUE(server.up());

  const json j = run_node_client("structured_client.mjs", {server.url(), "tiny-random", "5"});
  ASSERT_FALSE(j.is_null());

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
