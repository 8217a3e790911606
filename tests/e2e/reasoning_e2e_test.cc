// Thinking models through a real `seer serve` and the official OpenAI Node client
// (tests/e2e/node/reasoning_client.mjs; `npm ci --prefix tests/e2e/node`): random
// tiny models carrying the Qwen3 and DeepSeek-R1 template fixtures.
#include <regex>

#include <gtest/gtest.h>

#include "e2e/node_client.h"
#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

// The byte vocabulary spells "</think>" in one token per byte.
constexpr int kCloseTagTokens = 8;
constexpr int kBudget = 5;

// A tiny random model (4k context: Qwen3 writes the tools into the prompt) with
// tests/data/chat_templates/FAMILY/template.jinja; "" on failure.
std::string model_with_template(const std::string& family) {
  const std::string path = seer::testing::scratch_dir() + "/tiny-" + family + ".gguf";
  int status = 0;
  run_command(seer::testing::seer_binary() + " make-model --shape tiny --type f32 --quiet --context 4096 --chat-template " +
                  seer::testing::source_dir() + "/tests/data/chat_templates/" + family + "/template.jinja --out " + path,
              &status);
  return status == 0 ? path : "";
}

TEST(ReasoningNodeClient, ReasoningContentStreamedAndNotWithUsageAndBudget) {
  SEER_REQUIRE_NODE_PACKAGES("openai");
  const std::string qwen3 = model_with_template("qwen3"), r1 = model_with_template("deepseek-r1-distill-llama");
  ASSERT_FALSE(qwen3.empty() || r1.empty()) << "seer make-model failed";
  ServerProcess q(qwen3, {"--served-model-name", "q"});
  ServerProcess r(r1, {"--served-model-name", "r"});
  ASSERT_TRUE(q.up() && r.up());

  const json j = run_node_client("reasoning_client.mjs", {q.url(), r.url(), std::to_string(kBudget)});
  ASSERT_FALSE(j.is_null());

  // The grammar wrote "<think>\nREASONING\n</think>\n\nANSWER": the two come apart.
  const json& m = j["whole"]["message"];
  const std::regex words("[a-z][a-z ]{2,12}[a-z]");
  ASSERT_TRUE(m["reasoning_content"].is_string()) << m;
  EXPECT_TRUE(std::regex_match(m["reasoning_content"].get<std::string>(), words)) << m;
  EXPECT_TRUE(std::regex_match(m["content"].get<std::string>(), words)) << m;
  const int reasoning_tokens = j["whole"]["usage"]["completion_tokens_details"]["reasoning_tokens"];
  // Every byte of "<think>\n" + reasoning + "\n</think>" is a token here (the "\n\n" after it is content).
  EXPECT_EQ(reasoning_tokens, static_cast<int>(m["reasoning_content"].get<std::string>().size()) + 8 + 9);
  EXPECT_LT(reasoning_tokens, j["whole"]["usage"]["completion_tokens"].get<int>());

  // Streamed (greedy, so the same reply): reasoning_content deltas, then content.
  EXPECT_EQ(j["stream"]["reasoning"], m["reasoning_content"]);
  EXPECT_EQ(j["stream"]["content"], m["content"]);
  EXPECT_GE(j["stream"]["reasoning_chunks"].get<int>(), 3);
  EXPECT_EQ(j["stream"]["usage"]["completion_tokens_details"]["reasoning_tokens"], reasoning_tokens);

  // Thinking off renders Qwen3's empty block "<think>\n\n</think>\n\n" (19 byte tokens).
  const json& p = j["prompt_tokens"];
  EXPECT_EQ(p["kwargs_off"].get<int>(), p["thinking"].get<int>() + 19) << p;
  EXPECT_EQ(p["effort_none"], p["kwargs_off"]);
  EXPECT_EQ(p["effort_high"], p["thinking"]);
  EXPECT_EQ(j["bad_effort"]["status"], 400);
  EXPECT_EQ(j["bad_effort"]["param"], "reasoning_effort");

  // DeepSeek-R1's prompt opens <think>: the random model's first tokens are reasoning,
  // and after kBudget of them the server forces "</think>".
  for (const char* which : {"budget", "budget_stream"}) {
    const json& b = j[which];
    EXPECT_EQ(b["usage"]["completion_tokens_details"]["reasoning_tokens"], kBudget + kCloseTagTokens) << b;
    EXPECT_EQ(b["usage"]["completion_tokens"], kBudget + 20) << b;
  }
  EXPECT_FALSE(j["budget"]["message"]["content"].get<std::string>().empty()) << j["budget"];
  EXPECT_EQ(j["budget_stream"]["reasoning"], j["budget"]["message"]["reasoning_content"]);
  EXPECT_EQ(j["budget_stream"]["content"], j["budget"]["message"]["content"]);
}

// A call written after the reasoning, and one written inside it: both come back as
// tool_calls (streamed and not), the reasoning as reasoning_content.
TEST(ReasoningServe, ToolCallsAfterAndInsideTheReasoningAreFound) {
  const std::string qwen3 = model_with_template("qwen3");
  ASSERT_FALSE(qwen3.empty()) << "seer make-model failed";
  ServerProcess s(qwen3);
  ASSERT_TRUE(s.up());
  const json tools = json::parse(R"([{"type": "function", "function": {"name": "lookup",
      "parameters": {"type": "object", "properties": {"q": {"type": "string"}}}}}])");
  const std::string call = R"("<tool_call>\n{\"name\": \"lookup\", \"arguments\": {\"q\": \"" [a-z]{2,6} "\"}}\n</tool_call>")";
  const std::string after = R"(root ::= "<think>\nfirst look\n</think>\n\n" )" + call;
  const std::string inside = R"(root ::= "<think>\nfirst look\n" )" + call + R"( "\n</think>\n\nok")";
  for (const std::string& grammar : {after, inside}) {
    json body = {{"messages", {{{"role", "user"}, {"content", "Look it up."}}}}, {"tools", tools},
                 {"grammar", grammar}, {"temperature", 0}, {"max_tokens", 120}};
    HttpResult r = http_post(s.port(), "/v1/chat/completions", body.dump());
    ASSERT_EQ(r.status, 200) << r.body;
    const json reply = json::parse(r.body)["choices"][0];
    EXPECT_EQ(reply["finish_reason"], "tool_calls") << reply;
    ASSERT_EQ(reply["message"]["tool_calls"].size(), 1u) << reply;
    EXPECT_EQ(reply["message"]["tool_calls"][0]["function"]["name"], "lookup");
    EXPECT_TRUE(reply["message"]["reasoning_content"].get<std::string>().starts_with("first look")) << reply;

    body["stream"] = true;
    HttpResult st = http_post(s.port(), "/v1/chat/completions", body.dump());
    ASSERT_EQ(st.status, 200) << st.body;
    std::string names, reasoning, finish;
    for (const std::string& d : sse_data(st.body)) {
      if (d == "[DONE]") continue;
      const json c = json::parse(d)["choices"][0];
      if (c["delta"].contains("reasoning_content")) reasoning += c["delta"]["reasoning_content"].get<std::string>();
      if (c["delta"].contains("tool_calls") && c["delta"]["tool_calls"][0].contains("id"))
        names += c["delta"]["tool_calls"][0]["function"]["name"].get<std::string>();
      if (c["finish_reason"].is_string()) finish = c["finish_reason"];
    }
    EXPECT_EQ(names, "lookup") << st.body;
    EXPECT_EQ(finish, "tool_calls");
    EXPECT_EQ(reasoning, reply["message"]["reasoning_content"]);
  }
}

}  // namespace
}  // namespace seer::e2e
