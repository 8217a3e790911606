// Issue 53, finding 4: one tenant's traffic cannot evict another tenant's
// conversations. Tenant B floods the server with stateless requests (each leaves a
// prefix entry) and new conversations, far past --max-conversations; tenant A's
// conversation keeps its history. A conversation that is evicted (here by its
// tenant's own cap) is answered 404 conversation_not_found, never continued with an
// empty history, and its id then starts afresh. A tenant's token rate is its own.
#include <string>

#include <gtest/gtest.h>

#include "e2e/api_calls.h"
#include "e2e/raw_http.h"
#include "e2e/server_process.h"

namespace seer::e2e {
namespace {

using nlohmann::json;

const std::string kKeyA = "sk-tenant-a-4d1e8b07c3";
const std::string kKeyB = "sk-tenant-b-9a62f3e5d8";

HttpResult chat(const ServerProcess& s, const std::string& key, const std::string& message,
                const std::string& conversation = "") {
  return http_request(s.port(), "POST", "/v1/chat/completions", chat_body(message, 2, conversation), bearer(key));
}

TEST(ServeTenantQuota, AFloodingTenantCannotEvictAnotherTenantsConversation) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB, "--max-conversations", "16"});
  ASSERT_TRUE(s.up());
  HttpResult a1 = chat(s, kKeyA, "Once upon a time", "story");
  ASSERT_EQ(a1.status, 200) << a1.body;
  for (int i = 0; i < 60; ++i) {
    HttpResult stateless = chat(s, kKeyB, "Tell me story number " + std::to_string(i));
    ASSERT_EQ(stateless.status, 200) << stateless.body;
    HttpResult named = chat(s, kKeyB, "Hello " + std::to_string(i), "b-" + std::to_string(i));
    ASSERT_EQ(named.status, 200) << named.body;
  }
  HttpResult a2 = chat(s, kKeyA, "What happened next?", "story");
  ASSERT_EQ(a2.status, 200) << a2.body;
  EXPECT_GT(prompt_tokens(a2), prompt_tokens(a1) + 2) << "tenant A's history is gone";
  // B's own oldest conversation went: its next turn is told so, once.
  HttpResult b0 = chat(s, kKeyB, "And then?", "b-0");
  EXPECT_EQ(b0.status, 404) << b0.body;
  const json e = json::parse(b0.body, nullptr, false);
  ASSERT_TRUE(e.contains("error")) << b0.body;
  EXPECT_EQ(e["error"]["code"], "conversation_not_found");
  EXPECT_EQ(e["error"]["param"], "conversation");
  HttpResult b0_again = chat(s, kKeyB, "And then?", "b-0");
  EXPECT_EQ(b0_again.status, 200) << "the id starts afresh after the 404: " << b0_again.body;
}

TEST(ServeTenantQuota, APerTenantCapEvictsOnlyThatTenantsOldest) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB, "--max-conversations-per-tenant", "2"});
  ASSERT_TRUE(s.up());
  ASSERT_EQ(chat(s, kKeyB, "Hi", "b-keep").status, 200);
  for (const char* id : {"a-0", "a-1", "a-2"}) ASSERT_EQ(chat(s, kKeyA, "Hello", id).status, 200);
  EXPECT_EQ(chat(s, kKeyA, "Again", "a-0").status, 404) << "a-0 was A's third-newest";
  EXPECT_EQ(chat(s, kKeyA, "Again", "a-2").status, 200);
  HttpResult b = chat(s, kKeyB, "Again", "b-keep");
  EXPECT_EQ(b.status, 200) << b.body;
}

// --tenant-tokens-per-minute: a tenant past its bucket gets 429 tenant_rate_limit
// with a Retry-After that says when the request fits; another tenant is untouched.
TEST(ServeTenantQuota, ATenantPastItsTokenRateGets429WithRetryAfter) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB, "--tenant-tokens-per-minute", "60",
                                 "--tenant-burst-tokens", "100"});
  ASSERT_TRUE(s.up());
  const std::string body = completion_body("Once upon a time", 60);
  HttpResult first = http_request(s.port(), "POST", "/v1/completions", body, bearer(kKeyA));
  ASSERT_EQ(first.status, 200) << first.body;
  HttpResult second = http_request(s.port(), "POST", "/v1/completions", body, bearer(kKeyA));
  EXPECT_EQ(second.status, 429) << second.body;
  const json e = json::parse(second.body, nullptr, false);
  ASSERT_TRUE(e.contains("error")) << second.body;
  EXPECT_EQ(e["error"]["code"], "tenant_rate_limit");
  EXPECT_GE(std::stoi(second.header("Retry-After")), 20) << "~30 tokens short at 1 token/s";
  HttpResult other = http_request(s.port(), "POST", "/v1/completions", body, bearer(kKeyB));
  EXPECT_EQ(other.status, 200) << other.body;
}

// --max-connections-per-tenant: a tenant's second open connection is refused (503
// too_many_connections) once its first request was admitted; another tenant's is not.
TEST(ServeTenantQuota, ATenantsConnectionsAreCapped) {
  ASSERT_FALSE(tiny_model().empty());
  ServerProcess s(tiny_model(), {"--api-key", kKeyA, "--api-key", kKeyB, "--max-connections-per-tenant", "1"});
  ASSERT_TRUE(s.up());
  auto get = [](const std::string& key) {
    return "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + key + "\r\n\r\n";
  };
  RawConnection first(s.port());
  ASSERT_TRUE(first.send_all(get(kKeyA)));
  std::vector<RawResponse> held = first.read_responses(1);
  ASSERT_EQ(held.size(), 1u);
  EXPECT_EQ(held[0].status, 200);  // kept alive: it holds tenant A's one connection
  RawConnection second(s.port());
  ASSERT_TRUE(second.send_all(get(kKeyA)));
  std::vector<RawResponse> refused = second.read_responses(1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].status, 503);
  EXPECT_NE(refused[0].body.find("too_many_connections"), std::string::npos) << refused[0].body;
  RawConnection other(s.port());
  ASSERT_TRUE(other.send_all(get(kKeyB)));
  std::vector<RawResponse> b = other.read_responses(1);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].status, 200);
}

}  // namespace
}  // namespace seer::e2e
