// The official `openai` npm client against `seer serve` (tests/e2e/node; install with
// `npm ci --prefix tests/e2e/node`). Skips when node or the package is missing.
#include <gtest/gtest.h>

#include "e2e/node_client.h"
#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

TEST(OpenAiNodeClient, ChatAndCompletionsStreamingAndNot) {
  SEER_REQUIRE_NODE_PACKAGES("openai");
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess server(tiny_model(), {"--served-model-name", "tiny-random"});
  ASSERT_TRUE(server.up());

  const json j = run_node_client("openai_client.mjs", {server.url(), "tiny-random"});
  ASSERT_FALSE(j.is_null());

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

// Issue 51: logprobs with alternatives, n choices, legacy logprobs, echo and cached_tokens.
TEST(OpenAiNodeClient, SamplingOutputsChoicesAndCachedTokens) {
  SEER_REQUIRE_NODE_PACKAGES("openai");
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess server(tiny_model(), {"--served-model-name", "tiny-random"});
  ASSERT_TRUE(server.up());

  const json j = run_node_client("sampling_client.mjs", {server.url(), "tiny-random"});
  ASSERT_FALSE(j.is_null());

  auto check_entries = [](const json& entries) {
    ASSERT_EQ(entries.size(), 4u) << entries.dump();
    for (const json& e : entries) {
      EXPECT_LE(e["logprob"].get<double>(), 0.0);
      ASSERT_EQ(e["top"].size(), 3u) << e.dump();
      const json& top = e["top"];
      for (size_t i = 0; i < 3; ++i) {
        EXPECT_TRUE(top[i]["bytes"].is_array());
        if (i > 0) EXPECT_GE(top[i - 1]["logprob"].get<double>(), top[i]["logprob"].get<double>());
      }
      // The chosen token is never more likely than the most likely one.
      EXPECT_LE(e["logprob"].get<double>(), top[0]["logprob"].get<double>() + 1e-6);
    }
  };
  check_entries(j["chat_logprobs"]);
  // The streamed entries carry the same alternatives: top_logprobs, then bytes.
  json streamed = json::array();
  for (const json& e : j["chat_logprobs_stream"])
    streamed.push_back({{"token", e["token"]}, {"logprob", e["logprob"]}, {"bytes", e["bytes"]}, {"top", e["top_logprobs"]}});
  check_entries(streamed);

  EXPECT_EQ(j["n"]["indices"], json::array({0, 1}));
  EXPECT_EQ(j["n"]["finish"], json::array({"length", "length"}));
  EXPECT_EQ(j["n"]["usage"]["completion_tokens"], 6);  // summed over the choices
  EXPECT_EQ(j["n_stream"]["roles"], (json{{"0", "assistant"}, {"1", "assistant"}}));
  EXPECT_EQ(j["n_stream"]["finish"], (json{{"0", "length"}, {"1", "length"}}));
  EXPECT_EQ(j["n_stream"]["usage"]["completion_tokens"], 6);
  EXPECT_EQ(j["n_stream"]["usage"]["prompt_tokens"], j["n"]["usage"]["prompt_tokens"]);  // counted once
  // Same seed: the streamed choices are the non-streamed ones.
  EXPECT_EQ(j["n_stream"]["contents"]["0"], j["n"]["contents"][0]);
  EXPECT_EQ(j["n_stream"]["contents"]["1"], j["n"]["contents"][1]);

  const json& lp = j["completion_logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 3u) << lp.dump();
  EXPECT_EQ(lp["token_logprobs"].size(), 3u);
  EXPECT_EQ(lp["text_offset"][0], 0);
  ASSERT_EQ(lp["top_logprobs"].size(), 3u);
  for (const json& d : lp["top_logprobs"]) {
    EXPECT_GE(d.size(), 2u);
    EXPECT_LE(d.size(), 3u);  // the top 2, plus the chosen token when it is not among them
  }
  EXPECT_EQ(j["echo_text"].get<std::string>().rfind("Once upon a time", 0), 0u);

  EXPECT_LT(j["cached"]["first"].get<int>(), j["cached"]["second"].get<int>());
  EXPECT_GT(j["cached"]["second"].get<int>(), 0);
  EXPECT_LT(j["cached"]["second"].get<int>(), j["cached"]["prompt_tokens"].get<int>());
  EXPECT_GT(j["cached"]["stream"].get<int>(), 0);
  EXPECT_EQ(j["cached"]["reasoning"], 0);

  EXPECT_EQ(j["error"]["status"], 400);
  EXPECT_EQ(j["error"]["param"], "top_logprobs");
}

}  // namespace
}  // namespace seer::e2e
