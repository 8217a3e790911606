// API keys of `seer serve` (--api-key, --api-key-file): once a key is configured,
// every route but GET /health (and the live view's static page) needs
// `Authorization: Bearer KEY`, else 401 in OpenAI's shape (code invalid_api_key)
// with WWW-Authenticate: Bearer; /metrics and /v1/state too unless
// --metrics-public. The key file is re-read on SIGHUP, and a re-read that fails
// keeps the old keys. The key, the Host and the Content-Type are decided from the
// header alone: a refused request is answered before its body is sent (and a
// 100-continue is answered only once they pass). The official `openai` npm client
// works with its apiKey set.
// Without a key on a public address the server warns that the API is open.
#include <signal.h>

#include <filesystem>
#include <fstream>
#include <tuple>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/node_client.h"
#include "e2e/raw_http.h"
#include "e2e/server_process.h"
#include "e2e/wait.h"
#include "support/test_paths.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

const std::string kKey = "sk-seer-test-3b9f2a7c5e1d";
const Headers kJson = {{"Content-Type", "application/json"}};

struct Route {
  std::string method, path, body;
};

std::vector<Route> guarded_routes() {
  return {
      {"POST", "/v1/completions", completion_body("Hello", 2)},
      {"POST", "/v1/chat/completions", chat_body("Hello", 2)},
      {"GET", "/v1/models", ""},
      {"GET", "/v1/models/tiny", ""},
      {"GET", "/metrics", ""},
      {"GET", "/v1/state", ""},
      {"DELETE", "/v1/conversations/some-conversation", ""},
  };
}

HttpResult call(const ServerProcess& s, const Route& r, const Headers& headers) {
  return http_request(s.port(), r.method, r.path, r.body, headers);
}

Headers with_authorization(const std::string& value) {
  Headers h = kJson;
  h.emplace_back("Authorization", value);
  return h;
}

void expect_unauthorized(const HttpResult& r) {
  ASSERT_EQ(r.status, 401) << r.body;
  EXPECT_EQ(r.header("WWW-Authenticate").rfind("Bearer", 0), 0u) << "WWW-Authenticate: " << r.header("WWW-Authenticate");
  json j = json_of(r);
  ASSERT_FALSE(j.is_discarded()) << r.body;
  ASSERT_TRUE(j.contains("error") && j["error"].is_object()) << r.body;
  const json& e = j["error"];
  EXPECT_TRUE(e["message"].is_string()) << r.body;
  EXPECT_EQ(e["type"], "invalid_request_error") << r.body;
  EXPECT_TRUE(e.contains("param") && e["param"].is_null()) << r.body;
  EXPECT_EQ(e["code"], "invalid_api_key") << r.body;
}

TEST(ServeAuth, EveryRouteButHealthNeedsTheKey) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKey, "--served-model-name", "tiny"});
  ASSERT_TRUE(s.up());
  const std::vector<std::pair<std::string, Headers>> refused = {
      {"no key", kJson},
      {"wrong key", bearer("sk-not-the-key")},
      {"a prefix of the key", bearer(kKey.substr(0, kKey.size() - 1))},
      {"the key and more", bearer(kKey + "0")},
      {"Basic credentials", with_authorization("Basic dXNlcjpzay1zZWVyLXRlc3Q=")},
      {"the key without a scheme", with_authorization(kKey)},
      {"an empty bearer", with_authorization("Bearer")},
  };
  for (const Route& route : guarded_routes()) {
    for (const auto& [what, headers] : refused) {
      SCOPED_TRACE(route.method + " " + route.path + " with " + what);
      expect_unauthorized(call(s, route, headers));
    }
    SCOPED_TRACE(route.method + " " + route.path + " with the key");
    HttpResult ok = call(s, route, bearer(kKey));
    // The DELETE of an unknown conversation gets past the key to its own 404.
    EXPECT_EQ(ok.status, route.method == "DELETE" ? 404 : 200) << ok.body;
  }
  // Open without a key: the health check and the live view's static page.
  EXPECT_EQ(http_get(s.port(), "/health").status, 200);
  EXPECT_EQ(http_get(s.port(), "/").status, 200);
}

TEST(ServeAuth, MetricsPublicOpensMetricsAndStateButNotTheApi) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKey, "--metrics-public"});
  ASSERT_TRUE(s.up());
  EXPECT_EQ(http_get(s.port(), "/metrics").status, 200);
  EXPECT_EQ(http_get(s.port(), "/v1/state").status, 200);
  expect_unauthorized(http_post(s.port(), "/v1/completions", completion_body("Hello", 2)));
  expect_unauthorized(http_post(s.port(), "/v1/chat/completions", chat_body("Hello", 2)));
  expect_unauthorized(http_get(s.port(), "/v1/models"));
  HttpResult ok = http_request(s.port(), "POST", "/v1/completions", completion_body("Hello", 2), bearer(kKey));
  EXPECT_EQ(ok.status, 200) << ok.body;
}

// Writes `text` to `path` at once (a rename), so the server never reads half of it.
void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << text;
  }
  std::filesystem::rename(tmp, path);
}

TEST(ServeAuth, ApiKeyFileIsReReadOnSighupAndAFailedReReadKeepsTheKeys) {
  ASSERT_FALSE(tiny_model().empty());
  const std::string file = seer::testing::scratch_dir() + "/api-keys.txt";
  write_file(file, "# the test's keys\nsk-key-one team-a\n");
  ServerProcess s(tiny_model(), {"--api-key-file", file});
  ASSERT_TRUE(s.up());
  auto status_with = [&](const std::string& key) {
    return http_request(s.port(), "GET", "/v1/models", "", key.empty() ? kJson : bearer(key)).status;
  };
  EXPECT_EQ(status_with("sk-key-one"), 200);
  EXPECT_EQ(status_with("sk-key-two"), 401);

  // A second key, then SIGHUP: it works once the file is re-read.
  write_file(file, "# the test's keys\nsk-key-one team-a\n\nsk-key-two   team-b\n");
  ASSERT_EQ(kill(s.pid(), SIGHUP), 0);
  EXPECT_TRUE(wait_until([&] { return status_with("sk-key-two") == 200; })) << s.stderr_text();
  EXPECT_EQ(status_with("sk-key-one"), 200);
  EXPECT_EQ(status_with(""), 401);

  // The file gone: the re-read fails and every key stays as it was (never an open
  // API). Checked over a stretch of requests around the re-read.
  std::filesystem::rename(file, file + ".away");
  ASSERT_EQ(kill(s.pid(), SIGHUP), 0);
  for (int i = 0; i < 20; ++i) {
    ASSERT_EQ(status_with("sk-key-one"), 200) << "request " << i << "\n" << s.stderr_text();
    ASSERT_EQ(status_with("sk-key-two"), 200) << "request " << i;
    ASSERT_EQ(status_with(""), 401) << "request " << i;
  }
  EXPECT_TRUE(s.up() && http_get(s.port(), "/health").status == 200) << "SIGHUP stopped the server";

  // Back with a different set: a removed key stops working, a new one starts.
  write_file(file, "sk-key-one team-a\nsk-key-three team-c\n");
  ASSERT_EQ(kill(s.pid(), SIGHUP), 0);
  EXPECT_TRUE(wait_until([&] { return status_with("sk-key-three") == 200; })) << s.stderr_text();
  EXPECT_EQ(status_with("sk-key-two"), 401);
  EXPECT_EQ(status_with("sk-key-one"), 200);
}

TEST(ServeAuth, OpenAiNodeClientSendsItsApiKey) {
  SEER_REQUIRE_NODE_PACKAGES("openai");
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--served-model-name", "tiny-random", "--api-key", kKey});
  ASSERT_TRUE(s.up());
  const json j = run_node_client("auth_client.mjs", {s.url(), "tiny-random", kKey, "sk-wrong-key"});
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["chat"]["object"], "chat.completion");
  EXPECT_EQ(j["chat"]["usage"]["completion_tokens"], 4);
  EXPECT_GE(j["stream"]["chunks"].get<int>(), 2);
  EXPECT_EQ(j["stream"]["finish_reason"], "length");
  EXPECT_EQ(j["models"], json::array({"tiny-random"}));
  ASSERT_TRUE(j["wrong"].is_object()) << "the wrong key was accepted: " << j.dump();
  EXPECT_EQ(j["wrong"]["status"], 401);
  EXPECT_EQ(j["wrong"]["code"], "invalid_api_key");
  EXPECT_EQ(j["wrong"]["type"], "invalid_request_error");
  EXPECT_EQ(j["wrong"]["authentication"], true) << j["wrong"].dump();
}

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

TEST(ServeAuth, PublicAddressWithoutAKeyWarnsThatTheApiIsOpen) {
  ASSERT_FALSE(tiny_model().empty());
  {
    ServerProcess open(tiny_model(), {"--host", "0.0.0.0"});
    ASSERT_TRUE(open.up());
    EXPECT_TRUE(wait_until([&] { return open.stderr_text().find("the API is open") != std::string::npos; }))
        << open.stderr_text();
    EXPECT_EQ(count_of(open.stderr_text(), "the API is open"), 1u) << open.stderr_text();
    // A warning, not a refusal: the API answers without a key.
    EXPECT_EQ(http_post(open.port(), "/v1/completions", completion_body("Hello", 2)).status, 200);
  }
  ServerProcess keyed(tiny_model(), {"--host", "0.0.0.0", "--api-key", kKey});
  ASSERT_TRUE(keyed.up());
  EXPECT_EQ(keyed.stderr_text().find("the API is open"), std::string::npos) << keyed.stderr_text();
}

// The head of a POST whose `body_bytes` of body are never sent.
std::string head_without_body(int port, const Headers& headers, size_t body_bytes) {
  std::string h = "POST /v1/completions HTTP/1.1\r\n";
  bool host = false;
  for (const auto& [name, value] : headers) {
    h += name + ": " + value + "\r\n";
    host = host || name == "Host";
  }
  if (!host) h += "Host: 127.0.0.1:" + std::to_string(port) + "\r\n";
  return h + "Content-Length: " + std::to_string(body_bytes) + "\r\n\r\n";
}

TEST(ServeAuth, RefusalsAreDecidedFromTheHeaderBeforeTheBody) {
  ASSERT_FALSE(tiny_model().empty());
  // A body timeout far beyond the wait: an answer can only come from the header.
  ServerProcess s(tiny_model(), {"--api-key", kKey, "--body-timeout", "300"});
  ASSERT_TRUE(s.up());
  const Headers key = {{"Authorization", "Bearer " + kKey}};
  const std::vector<std::tuple<std::string, Headers, int>> cases = {
      {"no key", kJson, 401},
      {"a wrong key", bearer("sk-not-the-key"), 401},
      {"a Host not allowed", {{"Authorization", "Bearer " + kKey}, {"Content-Type", "application/json"}, {"Host", "rebind.example"}}, 421},
      {"text/plain", {{"Authorization", "Bearer " + kKey}, {"Content-Type", "text/plain"}}, 415},
      {"no Content-Type", key, 415},
  };
  for (const auto& [what, headers, status] : cases) {
    SCOPED_TRACE(what);
    RawConnection c(s.port());
    ASSERT_TRUE(c.send_all(head_without_body(s.port(), headers, 1 << 20)));
    std::vector<RawResponse> got = c.read_responses(1);
    ASSERT_EQ(got.size(), 1u) << "no answer before the body: '" << c.received() << "'";
    EXPECT_EQ(got[0].status, status) << got[0].body;
    if (status == 401) {
      EXPECT_EQ(got[0].header("WWW-Authenticate").rfind("Bearer", 0), 0u);
    }
    // The unread body is not kept waiting for: the connection ends.
    EXPECT_TRUE(c.server_closed() || c.wait_closed()) << "the connection stayed open";
  }
}

TEST(ServeAuth, ContinueIsSentOnlyAfterTheKeyIsChecked) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKey, "--body-timeout", "300"});
  ASSERT_TRUE(s.up());
  const std::string body = completion_body("Hello", 2);
  {
    Headers h = bearer("sk-not-the-key");
    h.emplace_back("Expect", "100-continue");
    RawConnection c(s.port());
    ASSERT_TRUE(c.send_all(head_without_body(s.port(), h, body.size())));
    std::vector<RawResponse> got = c.read_responses(1);
    ASSERT_EQ(got.size(), 1u) << "'" << c.received() << "'";
    EXPECT_EQ(got[0].status, 401) << got[0].body;
    EXPECT_EQ(c.received().find("100 Continue"), std::string::npos) << c.received();
  }
  Headers h = bearer(kKey);
  h.emplace_back("Expect", "100-continue");
  RawConnection c(s.port());
  ASSERT_TRUE(c.send_all(head_without_body(s.port(), h, body.size())));
  EXPECT_TRUE(wait_until([&] {
    c.read_responses(1, std::chrono::milliseconds(0));
    return c.received().find("HTTP/1.1 100 Continue\r\n\r\n") != std::string::npos;
  })) << "'" << c.received() << "'";
  ASSERT_TRUE(c.send_all(body));
  std::vector<RawResponse> got = c.read_responses(1);
  ASSERT_EQ(got.size(), 1u) << "'" << c.received() << "'";
  EXPECT_EQ(got[0].status, 200) << got[0].body;
}

}  // namespace
}  // namespace seer::e2e
