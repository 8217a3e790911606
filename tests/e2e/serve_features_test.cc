// `seer serve` features of issue 11: --tbt-slo profiles the backend and sets τ
// (seer_token_budget), reused from --profile-cache; logit_bias forces a token and is
// validated; unimplemented OpenAI fields are refused; /v1/state reports the engine.
#include <filesystem>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

std::string builtin_model() {
  return (std::filesystem::path(seer::testing::seer_binary()).parent_path() / "models" / "stories260K.gguf").string();
}

TEST(ServeFeatures, TbtSloProfilesTheBackendAndSetsTheTokenBudget) {
  const std::string cache = seer::testing::scratch_dir() + "/profile.json";
  int budget = 0;
  {
    ServerProcess s(builtin_model(), {"--policy", "sarathi", "--tbt-slo", "0.5", "--profile-cache", cache});
    ASSERT_TRUE(s.up());
    budget = static_cast<int>(metric(s.port(), "seer_token_budget").value_or(0));
    EXPECT_GT(budget, 0);
    EXPECT_EQ(budget % 64, 0) << budget;  // tile-rounded
    EXPECT_NE(s.stderr_text().find("-> token budget " + std::to_string(budget)), std::string::npos) << s.stderr_text();
    EXPECT_TRUE(std::filesystem::exists(cache));
    HttpResult r = http_post(s.port(), "/v1/completions", R"({"prompt": "Once upon a time", "max_tokens": 8})");
    EXPECT_EQ(r.status, 200) << r.body;
  }
  // A restart reuses the cached profile: same τ, no new profiling.
  ServerProcess again(builtin_model(), {"--policy", "sarathi", "--tbt-slo", "0.5", "--profile-cache", cache});
  ASSERT_TRUE(again.up());
  EXPECT_NE(again.stderr_text().find("iteration-time profile from " + cache), std::string::npos)
      << again.stderr_text();
  EXPECT_EQ(metric(again.port(), "seer_token_budget").value_or(0), budget);
}

// What a user meets with no flags (issue 30): prefix caching on, a host tier sized
// from the machine's memory, and τ from the default TBT target, each said at start-up.
TEST(ServeFeatures, WithNoFlagsPrefixCachingHostTierAndTheDefaultTbtTarget) {
  ServerProcess s(builtin_model());
  ASSERT_TRUE(s.up());
  const std::string log = s.stderr_text();
  EXPECT_NE(log.find("--swap-blocks auto"), std::string::npos) << log;
  EXPECT_NE(log.find("TBT SLO 0.100 s (the default target"), std::string::npos) << log;
  EXPECT_NE(log.find("-> token budget"), std::string::npos) << log;
  EXPECT_NE(log.find(", host tier "), std::string::npos) << log;
  // A re-sent prompt (a stateless client's history) finds its K/V cached.
  const std::string body =
      R"({"prompt": "Once upon a time there was a little girl who liked to play in the park with her dog", )"
      R"("max_tokens": 4})";
  ASSERT_EQ(http_post(s.port(), "/v1/completions", body).status, 200);
  ASSERT_EQ(http_post(s.port(), "/v1/completions", body).status, 200);
  EXPECT_GT(metric(s.port(), "seer_cache_hit_tokens_total{tier=\"device\"}").value_or(0), 0);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);  // requests hold nothing now
  EXPECT_GT(metric(s.port(), "seer_kv_blocks_cached").value_or(0), 0);
}

TEST(ServeFeatures, SwapBlocksZeroMeansNoHostTier) {
  ServerProcess none(builtin_model(), {"--swap-blocks", "0"});
  ASSERT_TRUE(none.up());
  EXPECT_NE(none.stderr_text().find("no host tier"), std::string::npos) << none.stderr_text();
}

std::string completion_text(int port, const std::string& prompt, const json& extra) {
  json body = {{"prompt", prompt}, {"max_tokens", 6}, {"temperature", 0}, {"ignore_eos", true}};
  body.update(extra);
  HttpResult r = http_post(port, "/v1/completions", body.dump());
  EXPECT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body, nullptr, false);
  return j.is_discarded() ? "" : j["choices"][0]["text"].get<std::string>();
}

TEST(ServeFeatures, LogitBiasForcesATokenAndIsValidated) {
  ServerProcess s(builtin_model());
  ASSERT_TRUE(s.up());
  const json force = {{"logit_bias", {{"300", 100}}}};
  const std::string free_a = completion_text(s.port(), "Once upon a time", json::object());
  const std::string forced_a = completion_text(s.port(), "Once upon a time", force);
  const std::string forced_b = completion_text(s.port(), "Tom and his dog", force);
  EXPECT_NE(forced_a, free_a);
  // Whatever the prompt, every token is the forced one.
  EXPECT_EQ(forced_a, forced_b);
  ASSERT_FALSE(forced_a.empty());
  for (const auto& [bad, param] : std::vector<std::pair<std::string, std::string>>{
           {R"({"prompt": "a", "logit_bias": {"99999": 5}})", "logit_bias"},
           {R"({"prompt": "a", "logit_bias": {"-1": 5}})", "logit_bias"},
           {R"({"prompt": "a", "logit_bias": {"abc": 5}})", "logit_bias"},
           {R"({"prompt": "a", "logit_bias": {"5": 101}})", "logit_bias.5"},
           {R"({"prompt": "a", "logit_bias": {"5": "x"}})", "logit_bias.5"},
           {R"({"prompt": "a", "logit_bias": [1]})", "logit_bias"},
           {R"({"prompt": "a", "tools": [{"type": "function"}]})", "tools"},
           {R"({"prompt": "a", "response_format": {"type": "xml"}})", "response_format"},
           {R"({"prompt": "a", "grammar": "root ::= undefined-rule"})", "grammar"},
           {R"({"prompt": "a", "suffix": "x"})", "suffix"},
       }) {
    HttpResult e = http_post(s.port(), "/v1/completions", bad);
    EXPECT_EQ(e.status, 400) << bad << " -> " << e.body;
    json j = json::parse(e.body, nullptr, false);
    if (!j.is_discarded()) EXPECT_EQ(j["error"]["param"], param) << bad;
  }
  // The no-op values of those fields are accepted.
  EXPECT_EQ(http_post(s.port(), "/v1/completions",
                      R"({"prompt": "a", "max_tokens": 2, "response_format": {"type": "text"}, "tool_choice": "none"})")
                .status,
            200);
}

TEST(ServeFeatures, StateEndpointReportsTheEngine) {
  ServerProcess s(builtin_model(), {"--swap-blocks", "64"});
  ASSERT_TRUE(s.up());
  ASSERT_EQ(http_post(s.port(), "/v1/completions", R"({"prompt": "Hello", "max_tokens": 5, "ignore_eos": true})").status,
            200);
  HttpResult r = http_get(s.port(), "/v1/state");
  ASSERT_EQ(r.status, 200);
  json j = json::parse(r.body);
  EXPECT_EQ(j["model"], "stories260K");
  EXPECT_EQ(j["policy"], "seer");  // the default policy
  EXPECT_GT(j["kv"]["device"]["total"].get<int>(), 0);
  EXPECT_EQ(j["kv"]["host"]["total"].get<int>(), 64);
  EXPECT_GE(j["iterations"]["count"].get<int>(), 5);
  EXPECT_GE(j["iterations"]["prefill_tokens"].get<int>(), 1);
  EXPECT_EQ(j["ttft_s"]["count"].get<int>(), 1);
  EXPECT_EQ(j["tbt_s"]["count"].get<int>(), 4);
  HttpResult page = http_get(s.port(), "/");
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  EXPECT_EQ(page.body.find("http://"), std::string::npos) << "the page must not load anything from elsewhere";
}

}  // namespace
}  // namespace seer::e2e
