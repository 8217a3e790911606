// HTTP/1.1 as `seer serve` must speak it to be safe behind browsers, proxies and
// load balancers: pipelined requests are answered in order, and a connection that
// goes away (even with pipelined bytes still unread) has its running request
// aborted; Host is checked against --allowed-hosts (DNS rebinding: 421); a POST
// needs Content-Type: application/json (a browser's cross-site form post cannot
// send it without a preflight: 415); a body shorter than its Content-Length gets
// 408 after --body-timeout; every 429 and 503 says when to retry; a request with
// two X-Conversation-Id headers is refused.
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <tuple>
#include <utility>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/raw_http.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

const Headers kJson = {{"Content-Type", "application/json"}};

// `json_body` padded with JSON whitespace to `size` bytes.
std::string padded(const std::string& json_body, size_t size) {
  if (json_body.size() >= size) return json_body;
  return json_body.substr(0, json_body.size() - 1) + std::string(size - json_body.size(), ' ') + "}";
}

// A request that runs for seconds on the 16k-context tiny model.
std::string long_request(int port) {
  return request_bytes(port, "POST", "/v1/completions",
                       R"({"prompt": "Hello", "max_tokens": 16000, "ignore_eos": true})", kJson);
}
constexpr double kLongTokens = 16000;

bool retry_after_is_seconds(const std::string& v) {
  return !v.empty() && std::all_of(v.begin(), v.end(), [](unsigned char c) { return std::isdigit(c); });
}

TEST(ServeHttpConformance, PipelinedRequestsAreAnsweredInOrder) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  // The first takes longer than the second: answering in completion order would
  // swap them.
  const std::string first = request_bytes(s.port(), "POST", "/v1/completions",
                                          padded(completion_body("The first request", 24), 1024), kJson);
  const std::string second =
      request_bytes(s.port(), "POST", "/v1/completions", padded(completion_body("The second", 2), 1024), kJson);
  RawConnection c(s.port());
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send_all(first + second));
  std::vector<RawResponse> responses = c.read_responses(2);
  ASSERT_EQ(responses.size(), 2u) << c.received();
  EXPECT_EQ(c.received().rfind("HTTP/1.1 200", 0), 0u) << c.received();
  const int want[] = {24, 2};
  for (size_t i = 0; i < 2; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(responses[i].status, 200) << responses[i].body;
    json j = json::parse(responses[i].body, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << responses[i].body;
    EXPECT_EQ(j["usage"]["completion_tokens"], want[i]) << responses[i].body;
  }
  EXPECT_FALSE(c.server_closed()) << "the keep-alive connection was closed";
}

TEST(ServeHttpConformance, ConnectionGoneWithPipelinedBytesUnreadAbortsItsRequest) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess s(tiny_long_context_model());
  ASSERT_TRUE(s.up());
  // A long request plus a pipelined one (16 KB) in one write; then the client goes.
  const std::string pipelined = request_bytes(s.port(), "POST", "/v1/completions",
                                              padded(completion_body("Pipelined", 2), 16 << 10), kJson);
  {
    RawConnection c(s.port());
    ASSERT_TRUE(c.ok());
    ASSERT_TRUE(c.send_all(long_request(s.port()) + pipelined));
    ASSERT_EQ(wait_for_metric_eq(s.port(), "seer_requests_running", 1), 1);
  }  // closed here
  // Aborted (not run to its 16000 tokens): the abort is the proof, no timed assertion.
  EXPECT_EQ(wait_for_metric(s.port(), "seer_requests_finished_total{reason=\"abort\"}", [](double v) { return v >= 1; }),
            1);
  EXPECT_TRUE(wait_until([&] {
    json h = json::parse(http_get(s.port(), "/health").body, nullptr, false);
    return !h.is_discarded() && h.value("requests_in_flight", -1) == 0;
  }));
  EXPECT_LT(metric(s.port(), "seer_generation_tokens_total").value_or(kLongTokens), kLongTokens);
  EXPECT_EQ(metric(s.port(), "seer_kv_blocks_used").value_or(-1), 0);
}

TEST(ServeHttpConformance, HostOutsideTheAllowedHostsGets421) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  const std::string port = std::to_string(s.port());
  auto with_host = [&](const ServerProcess& server, const std::string& host, const std::string& method,
                       const std::string& path) {
    Headers h = kJson;
    h.emplace_back("Host", host);
    return http_request(server.port(), method, path, method == "POST" ? completion_body("Hello", 2) : "", h);
  };
  // A DNS-rebinding page's requests carry its own host name.
  for (const std::string& host : {std::string("rebind.attacker.example"), "rebind.attacker.example:" + port}) {
    for (const auto& [method, path] : {std::pair<std::string, std::string>{"POST", "/v1/completions"},
                                       {"GET", "/v1/models"}}) {
      SCOPED_TRACE(method + " " + path + " Host: " + host);
      HttpResult r = with_host(s, host, method, path);
      EXPECT_EQ(r.status, 421) << r.body;
      EXPECT_EQ(error_code(r), "host_not_allowed") << r.body;
    }
  }
  // The default list: the listen address, localhost and [::1], with or without the port.
  for (const std::string& host : std::vector<std::string>{"localhost", "localhost:" + port, "127.0.0.1",
                                                         "127.0.0.1:" + port, "[::1]", "[::1]:" + port}) {
    SCOPED_TRACE("Host: " + host);
    EXPECT_EQ(with_host(s, host, "GET", "/v1/models").status, 200);
  }
  // Named, the host is served; "*" serves any.
  ServerProcess named(tiny_model(), {"--allowed-hosts", "rebind.attacker.example,127.0.0.1"});
  ServerProcess any(tiny_model(), {"--allowed-hosts", "*"});
  ASSERT_TRUE(named.up() && any.up());
  HttpResult r = with_host(named, "rebind.attacker.example", "POST", "/v1/completions");
  EXPECT_EQ(r.status, 200) << r.body;
  r = with_host(any, "anything.example", "POST", "/v1/completions");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(ServeHttpConformance, PostsNeedAJsonContentType) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  // What a cross-site page can post without a CORS preflight, and plain text.
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    const std::string body = std::string(path) == "/v1/completions" ? completion_body("Hello", 2) : chat_body("Hello", 2);
    for (const char* type : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
      SCOPED_TRACE(std::string(path) + " Content-Type: " + type);
      HttpResult r = http_post(s.port(), path, body, type);
      EXPECT_EQ(r.status, 415) << r.body;
      EXPECT_EQ(error_code(r), "unsupported_media_type") << r.body;
    }
    SCOPED_TRACE(path);
    EXPECT_EQ(http_post(s.port(), path, body, "application/json; charset=utf-8").status, 200);
    // No Content-Type at all.
    RawConnection c(s.port());
    ASSERT_TRUE(c.send_all(request_bytes(s.port(), "POST", path, body, {})));
    std::vector<RawResponse> got = c.read_responses(1);
    ASSERT_EQ(got.size(), 1u) << c.received();
    EXPECT_EQ(got[0].status, 415) << got[0].body;
  }
}

TEST(ServeHttpConformance, BodyShorterThanItsContentLengthGets408) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--body-timeout", "1"});
  ASSERT_TRUE(s.up());
  RawConnection c(s.port());
  ASSERT_TRUE(c.ok());
  const std::string head = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(s.port()) +
                           "\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"prompt\": \"Hel";
  ASSERT_TRUE(c.send_all(head));
  std::vector<RawResponse> got = c.read_responses(1);
  ASSERT_EQ(got.size(), 1u) << "no response before the connection ended: '" << c.received() << "'";
  EXPECT_EQ(got[0].status, 408) << got[0].body;
  // The server is fine afterwards.
  EXPECT_EQ(http_post(s.port(), "/v1/completions", completion_body("Hello", 2)).status, 200);
}

TEST(ServeHttpConformance, Every429CarriesRetryAfter) {
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess s(tiny_long_context_model(), {"--max-queue", "1", "--max-batch-size", "1"});
  ASSERT_TRUE(s.up());
  // One running, one waiting: the queue is full for the next.
  RawConnection running(s.port()), waiting(s.port());
  ASSERT_TRUE(running.send_all(long_request(s.port())));
  ASSERT_EQ(wait_for_metric_eq(s.port(), "seer_requests_running", 1), 1);
  ASSERT_TRUE(waiting.send_all(long_request(s.port())));
  ASSERT_EQ(wait_for_metric_eq(s.port(), "seer_requests_waiting", 1), 1);
  for (const char* path : {"/v1/completions", "/v1/chat/completions"}) {
    SCOPED_TRACE(path);
    const std::string body = std::string(path) == "/v1/completions" ? completion_body("Hello", 2) : chat_body("Hello", 2);
    HttpResult r = http_post(s.port(), path, body);
    EXPECT_EQ(r.status, 429) << r.body;
    EXPECT_EQ(error_code(r), "queue_full") << r.body;
    EXPECT_TRUE(retry_after_is_seconds(r.header("Retry-After"))) << "Retry-After: '" << r.header("Retry-After") << "'";
  }
}

TEST(ServeHttpConformance, Every503CarriesRetryAfter) {
  // Beyond --max-connections.
  {
    ASSERT_FALSE(tiny_model().empty());
    ServerProcess s(tiny_model(), {"--max-connections", "1"});
    ASSERT_TRUE(s.up());
    std::unique_ptr<RawConnection> held;
    HttpResult last;
    // The held connection is refused too while the start-up check's is still counted:
    // then it is opened again.
    EXPECT_TRUE(wait_until([&] {
      if (!held || held->server_closed()) held = std::make_unique<RawConnection>(s.port());
      held->read_responses(1, std::chrono::milliseconds(0));
      if (held->server_closed()) return false;
      last = http_get(s.port(), "/v1/models");
      return last.status == 503;
    })) << last.status << " " << last.body;
    EXPECT_TRUE(retry_after_is_seconds(last.header("Retry-After"))) << "Retry-After: '" << last.header("Retry-After") << "'";
  }
  // Shutting down after SIGTERM, while a long request is still finishing.
  ASSERT_FALSE(tiny_long_context_model().empty());
  ServerProcess s(tiny_long_context_model(), {"--shutdown-timeout", "60"});
  ASSERT_TRUE(s.up());
  RawConnection running(s.port());
  ASSERT_TRUE(running.send_all(long_request(s.port())));
  ASSERT_EQ(wait_for_metric_eq(s.port(), "seer_requests_running", 1), 1);
  ASSERT_EQ(kill(s.pid(), SIGTERM), 0);
  HttpResult last;
  EXPECT_TRUE(wait_until([&] {
    last = http_post(s.port(), "/v1/completions", completion_body("Hello", 1));
    return last.status == 503;
  })) << last.status << " " << last.body;
  EXPECT_TRUE(retry_after_is_seconds(last.header("Retry-After"))) << "Retry-After: '" << last.header("Retry-After") << "'";
}

TEST(ServeHttpConformance, TwoConversationIdHeadersAre400) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--trust-client-conversation-ids"});
  ASSERT_TRUE(s.up());
  for (const auto& [first, second] : {std::pair<std::string, std::string>{"conv-x", "conv-y"}, {"conv-x", "conv-x"}}) {
    Headers h = kJson;
    h.emplace_back("X-Conversation-Id", first);
    h.emplace_back("X-Conversation-Id", second);
    for (const auto& [method, path, body] :
         {std::tuple<std::string, std::string, std::string>{"POST", "/v1/completions", completion_body("Hello", 2)},
          {"POST", "/v1/chat/completions", chat_body("Hello", 2)},
          {"DELETE", "/v1/conversations/conv-x", ""}}) {
      SCOPED_TRACE(method + " " + path + " with " + first + " and " + second);
      HttpResult r = http_request(s.port(), method, path, body, h);
      EXPECT_EQ(r.status, 400) << r.body;
      EXPECT_EQ(error_code(r), "duplicate_header") << r.body;
    }
  }
}

}  // namespace
}  // namespace seer::e2e
