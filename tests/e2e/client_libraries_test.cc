// Issue 51: the npm clients apps are built on, against `seer serve` with a random
// Qwen3-layout model carrying Qwen3's vocabulary and template, at temperature 1 —
// the official `openai` client (chat.completions.parse with zod, runTools, n,
// top_logprobs), the Vercel AI SDK (generateObject, Output.object, toolChoice
// 'required', streamText) and LangChain (withStructuredOutput, bindTools, stream).
// Each client's script (tests/e2e/node/*_client.mjs) prints what the client parsed,
// with zod's own verdict; random weights write garbage unless the grammar holds them,
// and a reply cut at max_tokens is a failure, not a pass.
#include <gtest/gtest.h>

#include "e2e/family_model.h"
#include "e2e/node_client.h"
#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

constexpr int kSeeds = 3;

// A parsed object: zod accepted it (the client's own parse succeeded too).
void expect_valid(const json& e) {
  EXPECT_TRUE(e["valid"].get<bool>()) << e.dump();
}

TEST(ClientLibraries, OpenAiParseRunToolsChoicesAndLogprobs) {
  SEER_REQUIRE_NODE_PACKAGES("openai", "zod");
  SEER_REQUIRE_FAMILY_MODEL(model, kQwen3LongContext);
  ServerProcess server(model, {"--served-model-name", "qwen3-random"});
  ASSERT_TRUE(server.up());
  const json j = run_node_client("openai_zod_client.mjs", {server.url(), "qwen3-random", std::to_string(kSeeds)});
  ASSERT_FALSE(j.is_null());

  ASSERT_EQ(j["parse"].size(), static_cast<size_t>(kSeeds));
  for (const json& p : j["parse"]) {
    ASSERT_EQ(p["choices"].size(), 2u) << p.dump();  // n: 2
    int logprob_tokens = 0;
    for (size_t i = 0; i < 2; ++i) {
      const json& c = p["choices"][i];
      EXPECT_EQ(c["index"], i);
      EXPECT_EQ(c["finish_reason"], "stop") << c.dump();
      EXPECT_TRUE(c["parsed"].is_object()) << c.dump();
      expect_valid(c);
      EXPECT_EQ(c["top_counts"], json::array({2})) << c.dump();  // top_logprobs: 2 at every position
      logprob_tokens += c["logprob_tokens"].get<int>();
    }
    EXPECT_EQ(logprob_tokens, p["completion_tokens"].get<int>());  // one entry per token, usage summed over n
  }

  auto check_run = [](const json& r) {
    ASSERT_EQ(r["calls"].size(), 1u) << r.dump();  // zod parsed the arguments, so the function ran
    expect_valid(r["calls"][0]);
    EXPECT_EQ(r["roles"], json::array({"user", "assistant", "tool"})) << r.dump();
    EXPECT_EQ(r["tool_result"], R"({"temperature":21})");
    EXPECT_EQ(r["finish_reason"], "tool_calls");
  };
  ASSERT_EQ(j["run_tools"].size(), static_cast<size_t>(kSeeds));
  for (const json& r : j["run_tools"]) check_run(r);
  check_run(j["run_tools_stream"]);
}

TEST(ClientLibraries, AiSdkObjectsToolsAndStreamText) {
  SEER_REQUIRE_NODE_PACKAGES("ai", "@ai-sdk/openai-compatible", "zod");
  SEER_REQUIRE_FAMILY_MODEL(model, kQwen3LongContext);
  ServerProcess server(model, {"--served-model-name", "qwen3-random"});
  ASSERT_TRUE(server.up());
  const json j = run_node_client("ai_sdk_client.mjs", {server.url(), "qwen3-random", std::to_string(kSeeds)});
  ASSERT_FALSE(j.is_null());

  for (const char* key : {"generate_object", "output_object"}) {
    ASSERT_EQ(j[key].size(), static_cast<size_t>(kSeeds)) << key;
    for (const json& o : j[key]) {
      EXPECT_EQ(o["finish_reason"], "stop") << o.dump();
      EXPECT_TRUE(o["object"].is_object()) << o.dump();
      expect_valid(o);
    }
  }
  ASSERT_EQ(j["tools"].size(), static_cast<size_t>(kSeeds));
  for (const json& t : j["tools"]) {
    EXPECT_EQ(t["finish_reason"], "tool-calls") << t.dump();
    ASSERT_GE(t["calls"].size(), 1u) << t.dump();
    for (const json& c : t["calls"]) {
      EXPECT_EQ(c["name"], "get_weather");
      expect_valid(c);
    }
    EXPECT_EQ(t["executed"], t["calls"].size());  // the SDK ran the tool on each parsed input
    EXPECT_EQ(t["results"][0], json({{"temperature", 21}}));
  }

  const json& s = j["stream"];
  EXPECT_EQ(s["text"], s["whole"]);  // same seed: the stream assembles into the whole reply
  EXPECT_FALSE(s["text"].get<std::string>().empty());
  EXPECT_GE(s["chunks"].get<int>(), 2);
  EXPECT_EQ(s["finish_reason"], "length");  // unconstrained random text runs to maxOutputTokens
  EXPECT_EQ(s["usage"]["outputTokens"], 24);
  EXPECT_EQ(s["usage"]["inputTokens"], s["whole_usage"]["inputTokens"]);
}

TEST(ClientLibraries, LangChainStructuredOutputToolsAndStream) {
  SEER_REQUIRE_NODE_PACKAGES("@langchain/openai", "@langchain/core", "zod");
  SEER_REQUIRE_FAMILY_MODEL(model, kQwen3LongContext);
  ServerProcess server(model, {"--served-model-name", "qwen3-random"});
  ASSERT_TRUE(server.up());
  const json j = run_node_client("langchain_client.mjs", {server.url(), "qwen3-random", std::to_string(kSeeds)});
  ASSERT_FALSE(j.is_null());

  // jsonSchema: response_format; functionCalling: a forced tool call LangChain parses.
  for (const auto& [key, finish] : {std::pair{"json_schema", "stop"}, {"function_calling", "tool_calls"}}) {
    ASSERT_EQ(j[key].size(), static_cast<size_t>(kSeeds)) << key;
    for (const json& o : j[key]) {
      EXPECT_EQ(o["finish_reason"], finish) << o.dump();
      EXPECT_TRUE(o["parsed"].is_object()) << o.dump();
      expect_valid(o);
    }
  }
  ASSERT_EQ(j["tools"].size(), static_cast<size_t>(kSeeds));
  for (const json& t : j["tools"]) {
    EXPECT_EQ(t["finish_reason"], "tool_calls") << t.dump();
    EXPECT_EQ(t["invalid"], 0) << t.dump();
    ASSERT_EQ(t["calls"].size(), 1u) << t.dump();  // parallel_tool_calls: false
    EXPECT_EQ(t["calls"][0]["name"], "get_weather");
    EXPECT_TRUE(t["calls"][0]["id_ok"].get<bool>());
    expect_valid(t["calls"][0]);
  }

  const json& s = j["stream"];
  EXPECT_EQ(s["text"], s["whole"]);
  EXPECT_FALSE(s["text"].get<std::string>().empty());
  EXPECT_GE(s["chunks"].get<int>(), 2);
  EXPECT_EQ(s["finish_reason"], "length");
  EXPECT_EQ(s["usage"]["output_tokens"], 24);  // streamUsage: stream_options.include_usage
  EXPECT_EQ(s["usage"]["input_tokens"], s["whole_usage"]["input_tokens"]);
}

}  // namespace
}  // namespace seer::e2e
