#pragma once
// Per-tenant shares of the request path (issue 53, docs/security.md "Quotas"): how
// many connections one tenant may hold open, how many requests it may have waiting
// or running at once, and an optional
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
  int32_t max_connections = 0;  // open connections per tenant; 0: only --max-connections
  int32_t max_requests = 0;     // waiting + running per tenant; 0: no limit (--max-requests-per-tenant)
  double tokens_per_minute = 0; // 0: no rate limit (--tenant-tokens-per-minute)
  double burst_tokens = 0;      // bucket size; 0: one minute's worth
};

class TenantLimits {
 public:
  using Clock = std::chrono::steady_clock;

  explicit TenantLimits(TenantLimitOptions opts);

  enum class Counted { Requests, Connections };
  // Held for as long as a request of the tenant is waiting or running, or one of its
  // connections is open.
  class Slot {
   public:
    Slot(TenantLimits& limits, Counted what, std::string tenant, int32_t n)
        : limits_(limits), what_(what), tenant_(std::move(tenant)), n_(n) {}
    ~Slot() { limits_.release(what_, tenant_, n_); }
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    const std::string& tenant() const { return tenant_; }

   private:
    TenantLimits& limits_;
    Counted what_;
    std::string tenant_;
    int32_t n_;
  };

  // Admits `requests` requests of `tenant` that may use `tokens` tokens in all, or
  // throws ApiError 429 (tenant_request_limit / tenant_rate_limit, with the seconds
  // until it would fit in the message). `now` is for tests.
  [[nodiscard]] std::shared_ptr<Slot> admit(const std::string& tenant, int32_t requests, int64_t tokens,
                                            Clock::time_point now = Clock::now());

  // A connection now acts for `tenant` (its request was admitted with the tenant's
  // key): the slot to hold while it is open, or throws ApiError 503
  // too_many_connections when the tenant holds max_connections already.
  [[nodiscard]] std::shared_ptr<Slot> connect(const std::string& tenant);

  int32_t in_flight(const std::string& tenant) const;
  int32_t connections(const std::string& tenant) const;
  bool enabled() const { return opts_.max_requests > 0 || opts_.tokens_per_minute > 0; }
  bool counts_connections() const { return opts_.max_connections > 0; }

 private:
  struct Bucket {
    double tokens = 0;
    Clock::time_point refilled{};
  };
  void release(Counted what, const std::string& tenant, int32_t n);

  const TenantLimitOptions opts_;
  mutable Mutex mutex_;
  std::unordered_map<std::string, int32_t> in_flight_ GUARDED_BY(mutex_);
  std::unordered_map<std::string, int32_t> connections_ GUARDED_BY(mutex_);
  std::unordered_map<std::string, Bucket> buckets_ GUARDED_BY(mutex_);
};

}  // namespace seer::server
