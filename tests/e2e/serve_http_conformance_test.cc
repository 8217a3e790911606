// HTTP/1.1 as `seer serve` must speak it to be safe behind browsers, proxies and
// load balancers: pipelined requests are answered in order, and a connection that
// goes away (even with pipelined bytes still unread) has its running request
// aborted; Host is checked against --allowed-hosts (DNS rebinding: 421); a POST
// needs Content-Type: application/json (a browser's cross-site form post cannot
// send it without a preflight: 415); a body shorter than its Content-Length gets
// 408 after --body-timeout; every 429 and 503 says when to retry; a request with
// two X-Conversation-Id headers is refused. Framing is strict (RFC 9112): a transfer
// coding other than a single final `chunked`, Transfer-Encoding beside Content-Length,
// obs-fold and bare CR or LF are refused and the connection closed, so no body byte
// is ever read as a next request; chunked trailer fields are never headers; an
// unknown Expect gets 417; a client that half-closes after sending gets its answer.
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

// The POST head of a /v1/completions request: request line, Host, JSON Content-Type,
// then `lines` (each ending in CRLF) and the empty line.
std::string post_head(int port, const std::string& lines, const std::string& version = "HTTP/1.1") {
  return "POST /v1/completions " + version + "\r\nHost: 127.0.0.1:" + std::to_string(port) +
         "\r\nContent-Type: application/json\r\n" + lines + "\r\n";
}

// `body` as one chunk, the last chunk and `trailer` (field lines ending in CRLF).
std::string chunked(const std::string& body, const std::string& trailer = "") {
  char size[32];
  std::snprintf(size, sizeof size, "%zx", body.size());
  return std::string(size) + "\r\n" + body + "\r\n0\r\n" + trailer + "\r\n";
}

std::string content_length(const std::string& body) {
  return "Content-Length: " + std::to_string(body.size()) + "\r\n";
}

struct Refused {
  std::string what;
  std::string bytes;
  int status;
};

// Sends `bytes` and reads until the server closes: exactly one response, `status`,
// and the connection closed (a request smuggled behind it is never answered).
void expect_refused_and_closed(int port, const Refused& r) {
  SCOPED_TRACE(r.what);
  RawConnection c(port);
  ASSERT_TRUE(c.ok());
  ASSERT_TRUE(c.send_all(r.bytes));
  std::vector<RawResponse> got = c.read_responses(2);
  ASSERT_GE(got.size(), 1u) << "no response: '" << c.received() << "'";
  EXPECT_EQ(got[0].status, r.status) << got[0].body;
  EXPECT_EQ(got.size(), 1u) << "bytes after the refused request were answered as a request:\n" << c.received();
  EXPECT_TRUE(c.server_closed() || c.wait_closed()) << "the connection stayed open";
}

TEST(ServeHttpConformance, OnlyChunkedIsATransferCodingAndNeverBesideContentLength) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  const int port = s.port();
  const std::string body = completion_body("Hello", 2);
  // What a proxy that reads the other framing would forward as a second request.
  const std::string smuggled = request_bytes(port, "GET", "/v1/models", "", {});
  const std::vector<Refused> cases = {
      {"TE.CL: an unknown coding, no Content-Length", post_head(port, "Transfer-Encoding: xchunked\r\n") + smuggled, 501},
      {"a coding before chunked (not decoded)", post_head(port, "Transfer-Encoding: gzip, chunked\r\n") + chunked(body) + smuggled, 501},
      {"chunked not the final coding", post_head(port, "Transfer-Encoding: chunked, identity\r\n") + chunked(body) + smuggled, 400},
      {"chunked twice in one field", post_head(port, "Transfer-Encoding: chunked, chunked\r\n") + chunked(body) + smuggled, 400},
      {"two Transfer-Encoding fields", post_head(port, "Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n") + chunked(body) + smuggled, 400},
      {"whitespace before the colon", post_head(port, "Transfer-Encoding : chunked\r\n") + chunked(body) + smuggled, 400},
      {"an empty Transfer-Encoding", post_head(port, "Transfer-Encoding: \r\n" + content_length(body)) + body + smuggled, 400},
      {"an unknown coding and Content-Length", post_head(port, "Transfer-Encoding: xchunked\r\n" + content_length(body)) + body + smuggled, 400},
      {"CL.TE: Content-Length, then chunked", post_head(port, content_length(chunked(body)) + "Transfer-Encoding: chunked\r\n") + chunked(body) + smuggled, 400},
      {"TE.CL: chunked, then Content-Length", post_head(port, "Transfer-Encoding: chunked\r\n" + content_length(chunked(body))) + chunked(body) + smuggled, 400},
      {"Transfer-Encoding in HTTP/1.0", post_head(port, "Transfer-Encoding: chunked\r\n", "HTTP/1.0") + chunked(body) + smuggled, 400},
      {"a chunk-size line ended by a bare LF", post_head(port, "Transfer-Encoding: chunked\r\n") + "5\n{\"a\":\r\n0\r\n\r\n" + smuggled, 400},
  };
  for (const Refused& r : cases) expect_refused_and_closed(port, r);
  // Plain chunked is served.
  RawConnection c(port);
  ASSERT_TRUE(c.send_all(post_head(port, "Transfer-Encoding: chunked\r\n") + chunked(body)));
  std::vector<RawResponse> got = c.read_responses(1);
  ASSERT_EQ(got.size(), 1u) << c.received();
  EXPECT_EQ(got[0].status, 200) << got[0].body;
}

TEST(ServeHttpConformance, ObsFoldAndBareCrOrLfAre400) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  const std::string host = "Host: 127.0.0.1:" + std::to_string(s.port());
  const std::string smuggled = request_bytes(s.port(), "GET", "/v1/models", "", {});
  const std::vector<Refused> cases = {
      {"obs-fold (space)", "GET /v1/models HTTP/1.1\r\n" + host + "\r\nX-Note: one\r\n two\r\n\r\n" + smuggled, 400},
      {"obs-fold (tab)", "GET /v1/models HTTP/1.1\r\n" + host + "\r\nX-Note: one\r\n\ttwo\r\n\r\n" + smuggled, 400},
      {"a folded Transfer-Encoding", post_head(s.port(), "Transfer-Encoding:\r\n chunked\r\n") + chunked("{}") + smuggled, 400},
      {"a bare LF ending a field", "GET /v1/models HTTP/1.1\r\n" + host + "\nX-Note: one\r\n\r\n" + smuggled, 400},
      {"a bare CR inside a field", "GET /v1/models HTTP/1.1\r\n" + host + "\r\nX-Note: one\rtwo\r\n\r\n" + smuggled, 400},
      {"LF line endings throughout", "GET /v1/models HTTP/1.1\n" + host + "\n\n" + smuggled, 400},
  };
  for (const Refused& r : cases) expect_refused_and_closed(s.port(), r);
}

TEST(ServeHttpConformance, ChunkedTrailerFieldsAreNeverHeaders) {
  ASSERT_FALSE(tiny_model().empty());
  const std::string key = "sk-trailer-test-5c2e";
  ServerProcess s(tiny_model(), {"--api-key", key});
  ASSERT_TRUE(s.up());
  const int port = s.port();
  auto send = [&](const std::string& head_lines, const std::string& body, const std::string& trailer,
                  const std::string& content_type = "Content-Type: application/json\r\n") {
    RawConnection c(port);
    const std::string bytes = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) + "\r\n" +
                              content_type + head_lines + "Transfer-Encoding: chunked\r\n\r\n" + chunked(body, trailer);
    EXPECT_TRUE(c.send_all(bytes));
    std::vector<RawResponse> got = c.read_responses(1);
    return got.empty() ? RawResponse{} : got[0];
  };
  const std::string auth = "Authorization: Bearer " + key + "\r\n";
  const std::string body = completion_body("Hello", 2);
  // A key only in the trailer does not authenticate.
  RawResponse r = send("", body, auth);
  EXPECT_EQ(r.status, 401) << r.body;
  // A Content-Type only in the trailer is no Content-Type.
  r = send(auth, body, "Content-Type: application/json\r\n", "");
  EXPECT_EQ(r.status, 415) << r.body;
  // Trailer fields that would conflict with the header are ignored, not counted as
  // duplicates: the header decides.
  r = send(auth, body, "Authorization: Bearer sk-wrong\r\nContent-Type: text/plain\r\nHost: rebind.example\r\n");
  EXPECT_EQ(r.status, 200) << r.body;
  r = send(auth, completion_body("Hello", 2, "conv-a"), "X-Conversation-Id: conv-b\r\n");
  EXPECT_EQ(r.status, 200) << r.body;
}

TEST(ServeHttpConformance, UnknownExpectationGets417) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  const std::string body = completion_body("Hello", 2);
  for (const std::string& expect : {std::string("100-continue-please"), std::string("200-ok"), std::string("")}) {
    expect_refused_and_closed(
        s.port(), {"Expect: " + expect, post_head(s.port(), "Expect: " + expect + "\r\n" + content_length(body)) + body, 417});
  }
  // 100-continue itself works.
  RawConnection c(s.port());
  ASSERT_TRUE(c.send_all(post_head(s.port(), "Expect: 100-Continue\r\n" + content_length(body)) + body));
  std::vector<RawResponse> got = c.read_responses(1);
  ASSERT_EQ(got.size(), 1u) << c.received();
  EXPECT_EQ(got[0].status, 200) << got[0].body;
}

// The client sends its request and shuts its sending side (`nc -N`): the whole
// response still arrives, and nothing is aborted.
TEST(ServeHttpConformance, HalfClosedClientGetsTheWholeResponse) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model());
  ASSERT_TRUE(s.up());
  for (const bool stream : {false, true}) {
    SCOPED_TRACE(stream ? "stream" : "not streamed");
    json request = json::parse(completion_body("Hello", 200));
    if (stream) request["stream"] = true;
    RawConnection c(s.port());
    ASSERT_TRUE(c.send_all(request_bytes(s.port(), "POST", "/v1/completions", request.dump(), kJson)));
    c.shutdown_send();
    std::vector<RawResponse> got = c.read_responses(1);
    ASSERT_EQ(got.size(), 1u) << "'" << c.received() << "'";
    EXPECT_EQ(got[0].status, 200) << got[0].body;
    if (stream) {
      std::vector<std::string> data = sse_data(got[0].body);
      ASSERT_GE(data.size(), 2u) << got[0].body;
      EXPECT_EQ(data.back(), "[DONE]") << got[0].body;
      json last = json::parse(data[data.size() - 2], nullptr, false);
      ASSERT_FALSE(last.is_discarded()) << data[data.size() - 2];
      EXPECT_EQ(last["choices"][0]["finish_reason"], "length") << data[data.size() - 2];
    } else {
      json j = json::parse(got[0].body, nullptr, false);
      ASSERT_FALSE(j.is_discarded()) << got[0].body;
      EXPECT_EQ(j["usage"]["completion_tokens"], 200) << got[0].body;
    }
    EXPECT_TRUE(c.wait_closed()) << "the server kept a half-closed connection open after its response";
  }
  EXPECT_EQ(metric(s.port(), "seer_requests_finished_total{reason=\"abort\"}").value_or(0), 0);
}

}  // namespace
}  // namespace seer::e2e
