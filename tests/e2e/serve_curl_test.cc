// `seer serve` on 127.0.0.1 talked to with curl: completions and chat, streaming and
// not, on the tiny random model and on stories260K when present.
#include <fstream>

#include <gtest/gtest.h>

#include "e2e/server_process.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

struct CurlResult {
  int status = 0;
  std::string body;
};

// POSTs `body` with curl; -N so a stream is not buffered.
CurlResult curl_post(const ServerProcess& s, const std::string& path, const json& body) {
  static int n = 0;
  std::string file = seer::testing::scratch_dir() + "/curl-body-" + std::to_string(++n) + ".json";
  std::ofstream(file) << body.dump();
  int rc = 0;
  std::string out = run_command("curl -sS -N --max-time 120 -H 'Content-Type: application/json' --data-binary @" +
                                    file + " -w '\\n%{http_code}' " + s.url() + path,
                                &rc);
  CurlResult r;
  EXPECT_EQ(rc, 0) << out;
  auto nl = out.rfind('\n');
  if (nl == std::string::npos) return r;
  r.status = std::atoi(out.c_str() + nl + 1);
  r.body = out.substr(0, nl);
  return r;
}

class ServeCurl : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(tiny_model().empty()) << "seer make-model failed";
    server_ = std::make_unique<ServerProcess>(tiny_model(), std::vector<std::string>{"--served-model-name", "tiny"});
    ASSERT_TRUE(server_->up());
  }
  std::unique_ptr<ServerProcess> server_;
};

TEST_F(ServeCurl, CompletionNotStreaming) {
  auto r = curl_post(*server_, "/v1/completions",
                     {{"model", "tiny"}, {"prompt", "Hello"}, {"max_tokens", 5}, {"ignore_eos", true}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_TRUE(j["choices"][0]["text"].is_string());
  EXPECT_EQ(j["usage"]["completion_tokens"], 5);
  EXPECT_GT(j["usage"]["prompt_tokens"].get<int>(), 0);
}

TEST_F(ServeCurl, CompletionStreamingEndsWithDone) {
  auto r = curl_post(*server_, "/v1/completions",
                     {{"prompt", {1, 2, 3}}, {"max_tokens", 6}, {"ignore_eos", true}, {"stream", true},
                      {"stream_options", {{"include_usage", true}}}});
  ASSERT_EQ(r.status, 200) << r.body;
  auto events = sse_data(r.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  json usage = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage["choices"].empty());
  EXPECT_EQ(usage["usage"]["completion_tokens"], 6);
  EXPECT_EQ(usage["usage"]["prompt_tokens"], 3);
  json last = json::parse(events[events.size() - 3]);
  EXPECT_EQ(last["choices"][0]["finish_reason"], "length");
  for (size_t i = 0; i + 1 < events.size(); ++i) EXPECT_EQ(json::parse(events[i])["object"], "text_completion");
}

TEST_F(ServeCurl, ChatNotStreamingAndStreaming) {
  json body = {{"messages", {{{"role", "system"}, {"content", "Be brief."}}, {{"role", "user"}, {"content", "Hi"}}}},
               {"max_tokens", 4},
               {"ignore_eos", true},
               {"logprobs", true}};
  auto r = curl_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["usage"]["completion_tokens"], 4);
  EXPECT_EQ(j["choices"][0]["logprobs"]["content"].size(), 4u);

  body["stream"] = true;
  auto s = curl_post(*server_, "/v1/chat/completions", body);
  ASSERT_EQ(s.status, 200) << s.body;
  auto events = sse_data(s.body);
  ASSERT_GE(events.size(), 3u);
  EXPECT_EQ(events.back(), "[DONE]");
  json first = json::parse(events.front());
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  EXPECT_EQ(json::parse(events[events.size() - 2])["choices"][0]["finish_reason"], "length");
}

TEST_F(ServeCurl, SameSeedSameText) {
  json body = {{"prompt", "abc"}, {"max_tokens", 12}, {"temperature", 0.9}, {"seed", 7}, {"ignore_eos", true}};
  auto a = curl_post(*server_, "/v1/completions", body), b = curl_post(*server_, "/v1/completions", body);
  ASSERT_EQ(a.status, 200);
  EXPECT_EQ(json::parse(a.body)["choices"][0]["text"], json::parse(b.body)["choices"][0]["text"]);
}

TEST_F(ServeCurl, ModelsHealthMetrics) {
  HttpResult models = http_get(server_->port(), "/v1/models");
  ASSERT_EQ(models.status, 200);
  EXPECT_EQ(json::parse(models.body)["data"][0]["id"], "tiny");
  EXPECT_EQ(http_get(server_->port(), "/v1/models/tiny").status, 200);
  EXPECT_EQ(http_get(server_->port(), "/v1/models/other").status, 404);
  HttpResult health = http_get(server_->port(), "/health");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(json::parse(health.body)["status"], "ok");
  curl_post(*server_, "/v1/completions", {{"prompt", "x"}, {"max_tokens", 3}, {"ignore_eos", true}});
  HttpResult m = http_get(server_->port(), "/metrics");
  ASSERT_EQ(m.status, 200);
  EXPECT_NE(m.content_type.find("text/plain"), std::string::npos);
  for (const char* name :
       {"seer_time_to_first_token_seconds_bucket", "seer_time_between_tokens_seconds_bucket",
        "seer_e2e_request_latency_seconds_bucket", "seer_requests_running", "seer_requests_waiting",
        "seer_kv_blocks_used", "seer_kv_blocks_total", "seer_preemptions_total", "seer_prompt_tokens_total",
        "seer_generation_tokens_total"})
    EXPECT_NE(m.body.find(name), std::string::npos) << name;
  EXPECT_GE(metric(server_->port(), "seer_generation_tokens_total").value_or(0), 3);
  EXPECT_EQ(metric(server_->port(), "seer_e2e_request_latency_seconds_count").value_or(0), 1);
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \n\t"), e = s.find_last_not_of(" \n\t");
  return b == std::string::npos ? "" : s.substr(b, e - b + 1);
}

TEST(ServeStories, GreedyCompletionMatchesLlamaCppReference) {
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  SEER_REQUIRE_SHARED_FILE(reference, "models/reference/stories260K-once-upon-a-time.txt");
  std::ifstream in(reference);
  std::string expected((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  ServerProcess s(model);
  ASSERT_TRUE(s.up());
  // The reference is llama.cpp's greedy output: the prompt, then up to 128 tokens or EOS.
  auto r = curl_post(s, "/v1/completions", {{"prompt", "Once upon a time"}, {"max_tokens", 128}, {"temperature", 0}});
  ASSERT_EQ(r.status, 200) << r.body;
  json j = json::parse(r.body);
  EXPECT_EQ(j["model"], "stories260K");
  EXPECT_EQ(trim("Once upon a time" + j["choices"][0]["text"].get<std::string>()), trim(expected));
  // Streaming gives the same text.
  auto st = curl_post(s, "/v1/completions",
                      {{"prompt", "Once upon a time"}, {"max_tokens", 128}, {"temperature", 0}, {"stream", true}});
  std::string streamed;
  for (const auto& ev : sse_data(st.body))
    if (ev != "[DONE]") streamed += json::parse(ev)["choices"][0]["text"].get<std::string>();
  EXPECT_EQ(streamed, j["choices"][0]["text"]);
  auto c = curl_post(s, "/v1/chat/completions",
                     {{"messages", {{{"role", "user"}, {"content", "Tell me a story."}}}}, {"max_tokens", 16},
                      {"stream", true}});
  ASSERT_EQ(c.status, 200);
  EXPECT_EQ(sse_data(c.body).back(), "[DONE]");
}

}  // namespace
}  // namespace seer::e2e
