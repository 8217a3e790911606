// API keys, tenants and the checks every request passes before routing
// (docs/security.md): constant-time key comparison, key files with shared tenants and
// SIGHUP-style reloads that never open the server, Host validation against DNS
// rebinding, JSON-only POSTs, duplicate headers, and the HTTP parser's view of
// pipelined requests.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "common/error.h"
#include "server/api_error.h"
#include "server/api_keys.h"
#include "server/http_request_reader.h"
#include "server/request_guard.h"
#include "support/test_paths.h"

namespace seer::server {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = seer::testing::scratch_dir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

HttpRequest request(std::string method, std::string path, HttpHeaders headers = {}) {
  HttpRequest r;
  r.method = std::move(method);
  r.path = std::move(path);
  r.headers = std::move(headers);
  return r;
}

int status_of(const RequestGuard& guard, HttpRequest req) {
  try {
    guard.admit(req);
    return 200;
  } catch (const ApiError& e) {
    return e.status();
  }
}

TEST(ConstantTimeEqual, ComparesWholeStrings) {
  EXPECT_TRUE(constant_time_equal("sk-abc", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-abd"));
  EXPECT_FALSE(constant_time_equal("sk-abc", "sk-ab"));
  EXPECT_FALSE(constant_time_equal("sk-ab", "sk-abc"));
  EXPECT_FALSE(constant_time_equal("", "x"));
  EXPECT_TRUE(constant_time_equal("", ""));
}

TEST(ApiKeys, WithoutKeysEveryoneIsTheAnonymousTenant) {
  ApiKeys keys;
  EXPECT_FALSE(keys.enabled());
  EXPECT_EQ(keys.authenticate(""), kAnonymousTenant);
  EXPECT_EQ(keys.authenticate("Bearer whatever"), kAnonymousTenant);
}

TEST(ApiKeys, EachCommandLineKeyIsItsOwnTenantNamedTheSameOnEveryReplica) {
  ApiKeys a({"sk-alice", "sk-bob"}, "");
  ApiKeys b({"sk-bob", "sk-alice"}, "");  // another replica, keys in another order
  const auto alice = a.authenticate("Bearer sk-alice");
  const auto bob = a.authenticate("bearer sk-bob");  // the scheme is case-insensitive
  ASSERT_TRUE(alice && bob);
  EXPECT_NE(*alice, *bob);
  EXPECT_EQ(b.authenticate("Bearer sk-alice"), alice);
  EXPECT_TRUE(valid_tenant_name(*alice)) << *alice;
  EXPECT_EQ(alice->find("sk-alice"), std::string::npos) << "the tenant name must not be the key";
  for (const char* bad : {"", "Bearer", "Bearer ", "Basic sk-alice", "sk-alice", "Bearer sk-alic", "Bearer sk-alicee"})
    EXPECT_FALSE(a.authenticate(bad)) << bad;
}

TEST(ApiKeys, AKeyFileNamesSharedTenantsAndReloadsWithoutEverOpeningTheServer) {
  const std::string path = write_file("keys.txt", "# operators\nk1 alice\nk2   alice\n\nk3\n");
  ApiKeys keys({}, path);
  EXPECT_EQ(keys.size(), 3u);
  EXPECT_EQ(keys.authenticate("Bearer k1"), "alice");
  EXPECT_EQ(keys.authenticate("Bearer k2"), "alice");
  EXPECT_NE(keys.authenticate("Bearer k3"), "alice");
  EXPECT_FALSE(keys.authenticate("Bearer k4"));

  write_file("keys.txt", "k4 bob\n");
  EXPECT_EQ(keys.reload(), "");
  EXPECT_EQ(keys.authenticate("Bearer k4"), "bob");
  EXPECT_FALSE(keys.authenticate("Bearer k1"));

  write_file("keys.txt", "# nothing left\n");
  EXPECT_NE(keys.reload(), "");  // refused: the server would be open
  EXPECT_EQ(keys.authenticate("Bearer k4"), "bob");
  write_file("keys.txt", "k5 bad/tenant\n");
  EXPECT_NE(keys.reload(), "");
  EXPECT_EQ(keys.authenticate("Bearer k4"), "bob");
}

TEST(ApiKeys, MalformedKeysAndFilesAreRefusedAtStartUp) {
  EXPECT_THROW(ApiKeys({""}, ""), Error);
  EXPECT_THROW(ApiKeys({"has space"}, ""), Error);
  EXPECT_THROW(ApiKeys({}, seer::testing::scratch_dir() + "/missing.txt"), Error);
  EXPECT_THROW(ApiKeys({}, write_file("three.txt", "k1 alice extra\n")), Error);
}

TEST(RequestGuard, HostMustBeOneTheServerAnswersTo) {
  RequestGuard guard({}, "127.0.0.1");
  for (const char* ok : {"127.0.0.1:8080", "localhost", "LOCALHOST:80", "[::1]:8080", "127.0.0.1"})
    EXPECT_EQ(status_of(guard, request("GET", "/health", {{"Host", ok}})), 200) << ok;
  EXPECT_EQ(status_of(guard, request("GET", "/health", {{"Host", "rebind.attacker.example"}})), 421);
  EXPECT_EQ(status_of(guard, request("GET", "/health", {{"Host", "rebind.attacker.example:8080"}})), 421);
  EXPECT_EQ(status_of(guard, request("GET", "/health")), 200);  // HTTP/1.0 tools send none

  RequestGuard listed({nullptr, {"api.example.com"}, false}, "0.0.0.0");
  EXPECT_EQ(status_of(listed, request("GET", "/health", {{"Host", "api.example.com:443"}})), 200);
  EXPECT_EQ(status_of(listed, request("GET", "/health", {{"Host", "localhost"}})), 421);
  RequestGuard any({nullptr, {"*"}, false}, "0.0.0.0");
  EXPECT_EQ(status_of(any, request("GET", "/health", {{"Host", "anything"}})), 200);
}

TEST(RequestGuard, PostsMustBeJson) {
  RequestGuard guard({}, "127.0.0.1");
  EXPECT_EQ(status_of(guard, request("POST", "/v1/completions", {{"Content-Type", "application/json"}})), 200);
  EXPECT_EQ(status_of(guard, request("POST", "/v1/completions", {{"Content-Type", "Application/JSON; charset=utf-8"}})),
            200);
  for (const char* bad : {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
                          "application/jsonx"})
    EXPECT_EQ(status_of(guard, request("POST", "/v1/completions", {{"Content-Type", bad}})), 415) << bad;
  EXPECT_EQ(status_of(guard, request("POST", "/v1/completions")), 415);
  EXPECT_EQ(status_of(guard, request("DELETE", "/v1/conversations/x")), 200);
}

TEST(RequestGuard, DuplicateHeadersThatDecideWhoOrWhatAreRefused) {
  RequestGuard guard({}, "127.0.0.1");
  EXPECT_EQ(status_of(guard, request("GET", "/health", {{"X-Conversation-Id", "a"}, {"x-conversation-id", "b"}})), 400);
  EXPECT_EQ(status_of(guard, request("GET", "/health", {{"Authorization", "a"}, {"Authorization", "a"}})), 400);
  EXPECT_EQ(status_of(guard, request("GET", "/health", {{"Accept", "a"}, {"Accept", "b"}})), 200);
}

TEST(RequestGuard, WithKeysOnlyHealthAndTheLiveViewPageAreOpen) {
  ApiKeys keys({"sk-a"}, "");
  RequestGuard guard({&keys, {}, false}, "127.0.0.1");
  const HttpHeaders json = {{"Content-Type", "application/json"}};
  EXPECT_EQ(status_of(guard, request("GET", "/health")), 200);
  EXPECT_EQ(status_of(guard, request("GET", "/")), 200);
  for (const auto& [method, path] : std::vector<std::pair<std::string, std::string>>{
           {"GET", "/metrics"}, {"GET", "/v1/state"}, {"GET", "/v1/models"}, {"POST", "/v1/completions"},
           {"DELETE", "/v1/conversations/c"}, {"GET", "/no/such/route"}})
    EXPECT_EQ(status_of(guard, request(method, path, json)), 401) << method << " " << path;

  HttpRequest ok = request("POST", "/v1/completions", {{"Content-Type", "application/json"}, {"Authorization", "Bearer sk-a"}});
  guard.admit(ok);
  EXPECT_EQ(ok.tenant, *keys.authenticate("Bearer sk-a"));

  RequestGuard metrics_public({&keys, {}, true}, "127.0.0.1");
  EXPECT_EQ(status_of(metrics_public, request("GET", "/metrics")), 200);
  EXPECT_EQ(status_of(metrics_public, request("GET", "/v1/state")), 200);
  EXPECT_EQ(status_of(metrics_public, request("POST", "/v1/completions", json)), 401);
}

TEST(HttpRequestReader, PipelinedRequestsAreReadInOrderAndAPartialOneWaits) {
  const std::string a = "POST /v1/completions HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                        "Content-Length: 2\r\n\r\n{}";
  const std::string b = "GET /health?x=1 HTTP/1.1\r\nHost: localhost\r\n\r\n";
  ParsedRequests p = parse_http_requests(a + b + "GET /met", 1 << 20);
  ASSERT_EQ(p.requests.size(), 2u);
  EXPECT_EQ(p.error_status, 0);
  EXPECT_EQ(p.requests[0].body, "{}");
  EXPECT_EQ(p.requests[1].path, "/health");
  EXPECT_EQ(parse_http_requests("NOT HTTP\r\n\r\n", 1 << 20).error_status, 400);
  EXPECT_EQ(parse_http_requests(a, 1).error_status, 413);
}

}  // namespace
}  // namespace seer::server
