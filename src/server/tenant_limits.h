#pragma once
// Per-tenant shares of the request path (issue 53, docs/security.md "Quotas"): how
// many requests one tenant may have waiting or running at once, and an optional
// token rate per tenant (a token bucket over prompt + max_tokens, charged when a
// request is admitted, as OpenAI's tokens-per-minute limits count). Beyond either a
// request gets 429 with a Retry-After that says when it would fit. The engine's own
// --max-queue still bounds everyone together.
//
// Thread-safe: the connections' strands admit, responses end on any thread.
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>

#include "common/thread_annotations.h"

namespace seer::server {

class ApiError;

struct TenantLimitOptions {
  int32_t max_requests = 0;     // waiting + running per tenant; 0: no limit (--max-requests-per-tenant)
  double tokens_per_minute = 0; // 0: no rate limit (--tenant-tokens-per-minute)
  double burst_tokens = 0;      // bucket size; 0: one minute's worth
};

class TenantLimits {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TenantLimits(TenantLimitOptions opts);

  // Held for as long as a request of the tenant is waiting or running.
  class Slot {
   public:
    Slot(TenantLimits& limits, std::string tenant, int32_t requests)
        : limits_(limits), tenant_(std::move(tenant)), requests_(requests) {}
    ~Slot() { limits_.release(tenant_, requests_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;

   private:
    TenantLimits& limits_;
    std::string tenant_;
    int32_t requests_;
  };

  // Admits `requests` requests of `tenant` that may use `tokens` tokens in all, or
  // throws ApiError 429 (tenant_request_limit / tenant_rate_limit, with the seconds
  // until it would fit in the message). `now` is for tests.
  [[nodiscard]] std::shared_ptr<Slot> admit(const std::string& tenant, int32_t requests, int64_t tokens,
                                            Clock::time_point now = Clock::now());

  int32_t in_flight(const std::string& tenant) const;
  bool enabled() const { return opts_.max_requests > 0 || opts_.tokens_per_minute > 0; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled{};
  };
  void release(const std::string& tenant, int32_t requests);

  const TenantLimitOptions opts_;
  mutable Mutex mutex_;
  std::unordered_map<std::string, int32_t> in_flight_ GUARDED_BY(mutex_);
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mutex_);
};

}  // namespace seer::server
