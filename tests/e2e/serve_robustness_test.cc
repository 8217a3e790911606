// `seer serve` under hostile and heavy use: malformed and hostile requests each get a
// clean 4xx in OpenAI's error shape while good requests keep succeeding; a full
// queue answers 429; 200 concurrent streams all complete.
#include <atomic>
#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "bench/streaming_client.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

struct Hostile {
  std::string name;
  std::string path;
  std::string body;
  int status;
  std::string param;  // expected error.param ("" for null, "*" for any)
};

std::vector<Hostile> hostile_requests() {
  std::string long_prompt = "[";
  for (int i = 0; i < 600; ++i) long_prompt += (i ? "," : "") + std::to_string(10 + i % 200);
  long_prompt += "]";
  std::string many_stops = "[";
  for (int i = 0; i < 100; ++i) many_stops += std::string(i ? "," : "") + "\"s\"";
  many_stops += "]";
  return {
      {"malformed_json", "/v1/completions", R"({"prompt": "a",)", 400, ""},
      {"array_body", "/v1/completions", "[1,2,3]", 400, ""},
      {"empty_body", "/v1/completions", "", 400, ""},
      {"invalid_utf8", "/v1/completions", "{\"prompt\": \"\xc3\x28\"}", 400, ""},
      {"nul_byte", "/v1/completions", std::string("{\"prompt\": \"a\0\"}", 16), 400, ""},
      {"deep_nesting", "/v1/completions", std::string(20000, '[') + std::string(20000, ']'), 400, ""},
      {"max_tokens_string", "/v1/completions", R"({"prompt": "a", "max_tokens": "5"})", 400, "max_tokens"},
      {"max_tokens_negative", "/v1/completions", R"({"prompt": "a", "max_tokens": -1})", 400, "max_tokens"},
      {"max_tokens_huge", "/v1/completions", R"({"prompt": "a", "max_tokens": 1e300})", 400, "max_tokens"},
      {"max_tokens_past_context", "/v1/completions", R"({"prompt": "a", "max_tokens": 100000})", 400, "max_tokens"},
      {"prompt_past_context", "/v1/completions", R"({"prompt": )" + long_prompt + "}", 400, "prompt"},
      {"token_outside_vocab", "/v1/completions", R"({"prompt": [5, 99999]})", 400, "prompt[1]"},
      {"temperature_range", "/v1/completions", R"({"prompt": "a", "temperature": 9})", 400, "temperature"},
      {"temperature_overflow", "/v1/completions", R"({"prompt": "a", "temperature": 1e999})", 400, "*"},
      {"top_p_type", "/v1/completions", R"({"prompt": "a", "top_p": [0.5]})", 400, "top_p"},
      {"n_seventeen", "/v1/completions", R"({"prompt": "a", "n": 17})", 400, "n"},
      {"stream_string", "/v1/completions", R"({"prompt": "a", "stream": "yes"})", 400, "stream"},
      {"too_many_stops", "/v1/completions", R"({"prompt": "a", "stop": )" + many_stops + "}", 400, "stop"},
      {"bad_conversation", "/v1/completions", R"({"prompt": "a", "conversation": "../../etc"})", 400,
       "conversation"},
      {"bad_slo", "/v1/completions", R"({"prompt": "a", "slo": {"ttft_s": "soon"}})", 400, "slo.ttft_s"},
      {"unknown_model", "/v1/completions", R"({"prompt": "a", "model": "gpt-9"})", 404, "model"},
      {"chat_no_messages", "/v1/chat/completions", R"({"model": "tiny"})", 400, "messages"},
      {"chat_tool_without_call_id", "/v1/chat/completions", R"({"messages": [{"role": "tool", "content": "x"}]})", 400,
       "messages[0].tool_call_id"},
      {"chat_image_part", "/v1/chat/completions",
       R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", 400, "messages[0].content[0].type"},
      {"body_too_large", "/v1/completions", R"({"prompt": ")" + std::string(70000, 'a') + "\"}", 413, ""},
      {"unknown_route", "/v1/embeddings", R"({"input": "a"})", 404, ""},
      {"path_traversal", "/../../etc/passwd", "", 404, ""},
  };
}

void expect_openai_error(const HttpResult& r, const Hostile& h) {
  ASSERT_EQ(r.status, h.status) << h.name << ": " << r.body;
  json j = json::parse(r.body, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << h.name << ": " << r.body;
  ASSERT_TRUE(j.contains("error") && j["error"].is_object()) << h.name;
  const json& e = j["error"];
  EXPECT_TRUE(e["message"].is_string()) << h.name;
  EXPECT_TRUE(e["type"].is_string()) << h.name;
  EXPECT_TRUE(e.contains("param") && e.contains("code")) << h.name;
  if (h.param.empty()) {
    EXPECT_TRUE(e["param"].is_null()) << h.name << ": " << e.dump();
  } else if (h.param != "*") {
    EXPECT_EQ(e["param"], h.param) << h.name;
  }
}

TEST(ServeRobustness, HostileInputsGetClean4xxWhileGoodRequestsSucceed) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--served-model-name", "tiny", "--max-body-bytes", "65536"});
  ASSERT_TRUE(s.up());

  std::atomic<bool> stop{false};
  std::atomic<int> good_ok{0}, good_bad{0};
  std::vector<std::thread> good;
  for (int t = 0; t < 3; ++t)
    good.emplace_back([&] {
      while (!stop.load()) {
        HttpResult r = http_post(s.port(), "/v1/completions", R"({"prompt": "Hello", "max_tokens": 8, "ignore_eos": true})");
        bool ok = r.status == 200 && json::parse(r.body)["usage"]["completion_tokens"] == 8;
        (ok ? good_ok : good_bad).fetch_add(1);
      }
    });

  for (const Hostile& h : hostile_requests()) {
    SCOPED_TRACE(h.name);
    expect_openai_error(http_post(s.port(), h.path, h.body), h);
  }
  // Methods without a route, and raw protocol garbage: an error or a closed
  // connection, never a crash.
  EXPECT_EQ(http_get(s.port(), "/v1/completions").status, 404);
  raw_exchange(s.port(), "GARBAGE\r\n\r\n");
  raw_exchange(s.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(200000, 'x') + "\r\n\r\n");
  raw_exchange(s.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n{\"prompt\"", 1);
  raw_exchange(s.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n");
  raw_exchange(s.port(), "POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n");

  // Keep the good traffic going for a few more requests, then check it all succeeded.
  const int ok_so_far = good_ok.load();
  EXPECT_TRUE(wait_until([&] { return good_ok.load() + good_bad.load() >= ok_so_far + 6; }));
  stop.store(true);
  for (auto& t : good) t.join();
  EXPECT_GT(good_ok.load(), 0);
  EXPECT_EQ(good_bad.load(), 0);
  EXPECT_EQ(http_get(s.port(), "/health").status, 200);
  // Read once on purpose: every good client has its whole response, and the server
  // publishes the freed KV before it delivers a request's end (e2e/wait.h).
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

TEST(ServeRobustness, FullQueueAnswers429) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--max-queue", "2", "--max-batch-size", "1"});
  ASSERT_TRUE(s.up());
  std::vector<HttpResult> results(12);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      results[i] = http_post(s.port(), "/v1/completions", R"({"prompt": "Hi", "max_tokens": 48, "ignore_eos": true})");
    });
  for (auto& t : threads) t.join();
  int ok = 0, limited = 0;
  for (const auto& r : results) {
    if (r.status == 200) ++ok;
    if (r.status == 429) {
      ++limited;
      json e = json::parse(r.body)["error"];
      EXPECT_EQ(e["code"], "queue_full");
      EXPECT_EQ(e["type"], "rate_limit_error");
    }
    EXPECT_TRUE(r.status == 200 || r.status == 429) << r.status << " " << r.body;
  }
  EXPECT_GE(ok, 1);
  EXPECT_GE(limited, 1);
  EXPECT_GE(metric(s.port(), "seer_requests_rejected_total{status=\"429\"}").value_or(0), 1);
}

TEST(ServeRobustness, TwoHundredConcurrentStreamsAllComplete) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  const auto url = bench::parse_server_url(s.url());
  WallClock clock;
  std::vector<bench::ClientResult> results(200);
  std::vector<std::thread> threads;
  for (size_t i = 0; i < results.size(); ++i)
    threads.emplace_back([&, i] {
      bench::ClientRequest r;
      r.prompt = "Stream number " + std::to_string(i);
      r.max_tokens = 12;
      r.timeout_s = 120;
      results[i] = bench::send_streaming(url, r, clock);
    });
  for (auto& t : threads) t.join();
  int complete = 0;
  for (const auto& r : results) {
    EXPECT_TRUE(r.ok) << r.error;
    if (r.ok && r.completion_tokens == 12 && r.finish_reason == "length") ++complete;
  }
  EXPECT_EQ(complete, 200);
  // Every stream has ended: the counts and the freed KV are published (e2e/wait.h).
  EXPECT_EQ(metric(s.port(), "seer_requests_finished_total{reason=\"length\"}").value_or(0), 200);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

}  // namespace
}  // namespace seer::e2e
