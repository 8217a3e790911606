// Per-tenant shares of the request path (server/tenant_limits.h): connections and
// requests in flight per tenant, and a token bucket per tenant that refills at its rate; one tenant's
// use never touches another's.
#include "server/tenant_limits.h"

#include <gtest/gtest.h>

#include "server/api_error.h"

namespace seer::server {
namespace {

using namespace std::chrono_literals;

std::string refusal_code(TenantLimits& l, const std::string& tenant, int32_t n, int64_t tokens,
                         TenantLimits::Clock::time_point now, int* retry_after = nullptr) {
  try {
    auto slot = l.admit(tenant, n, tokens, now);
    return "";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 429);
    if (retry_after) *retry_after = e.retry_after();
    return e.code();
  }
}

TEST(TenantLimits, RequestsInFlightAreCappedPerTenantUntilTheirSlotsGo) {
  TenantLimits l({0, 2, 0, 0});
  const auto now = TenantLimits::Clock::now();
  auto a1 = l.admit("a", 1, 10, now);
  auto a2 = l.admit("a", 1, 10, now);
  EXPECT_EQ(l.in_flight("a"), 2);
  EXPECT_EQ(refusal_code(l, "a", 1, 10, now), "tenant_request_limit");
  EXPECT_EQ(l.in_flight("a"), 2) << "a refusal holds nothing";
  EXPECT_EQ(refusal_code(l, "b", 2, 10, now), "") << "another tenant has its own share";
  EXPECT_EQ(l.in_flight("b"), 0) << "its slots went with the call";
  a1.reset();
  EXPECT_EQ(l.in_flight("a"), 1);
  EXPECT_EQ(refusal_code(l, "a", 2, 10, now), "tenant_request_limit") << "n choices count n";
  auto a3 = l.admit("a", 1, 10, now);
  EXPECT_EQ(l.in_flight("a"), 2);
}

TEST(TenantLimits, TheTokenBucketRefillsAtItsRateAndSaysWhenARequestFits) {
  TenantLimits l({0, 0, 600, 1000});  // 10 tokens/s, 1000 at once
  const auto t0 = TenantLimits::Clock::now();
  EXPECT_EQ(refusal_code(l, "a", 1, 900, t0), "");
  int retry = 0;
  EXPECT_EQ(refusal_code(l, "a", 1, 200, t0, &retry), "tenant_rate_limit");
  EXPECT_EQ(retry, 10) << "100 tokens short at 10 tokens/s";
  EXPECT_EQ(refusal_code(l, "b", 1, 900, t0), "") << "tenant b has its own bucket";
  EXPECT_EQ(refusal_code(l, "a", 1, 200, t0 + 10s), "");
  EXPECT_EQ(refusal_code(l, "a", 1, 1001, t0 + 1h), "tenant_rate_limit") << "more than the bucket ever holds";
  EXPECT_EQ(refusal_code(l, "a", 1, 1000, t0 + 1h), "") << "the bucket refills to its size, no further";
}

TEST(TenantLimits, ConnectionsAreCountedPerTenantWhileHeld) {
  TenantLimits l({1, 0, 0, 0});
  auto a = l.connect("a");
  EXPECT_EQ(l.connections("a"), 1);
  try {
    auto again = l.connect("a");
    ADD_FAILURE() << "a second connection of tenant a was let in";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
    EXPECT_EQ(e.code(), "too_many_connections");
  }
  auto b = l.connect("b");
  a.reset();
  EXPECT_EQ(l.connections("a"), 0);
  auto a2 = l.connect("a");
  EXPECT_EQ(l.connections("b"), 1);
}

TEST(TenantLimits, OffByDefault) {
  TenantLimits l({});
  EXPECT_FALSE(l.enabled());
}

}  // namespace
}  // namespace seer::server
