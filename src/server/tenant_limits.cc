#include "server/tenant_limits.h"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/error.h"
#include "server/api_error.h"

namespace seer::server {

TenantLimits::TenantLimits(TenantLimitOptions opts) : opts_(opts) {
  if (opts_.max_connections < 0)
    fail("--max-connections-per-tenant must be >= 0 (got {})", opts_.max_connections);
  if (opts_.max_requests < 0) fail("--max-requests-per-tenant must be >= 0 (got {})", opts_.max_requests);
  if (!(opts_.tokens_per_minute >= 0)) fail("--tenant-tokens-per-minute must be >= 0 (got {})", opts_.tokens_per_minute);
  if (!(opts_.burst_tokens >= 0)) fail("--tenant-burst-tokens must be >= 0 (got {})", opts_.burst_tokens);
}

std::shared_ptr<TenantLimits::Slot> TenantLimits::admit(const std::string& tenant, int32_t requests, int64_t tokens,
                                                        Clock::time_point now) {
  MutexLock lock(mutex_);
  auto found = in_flight_.find(tenant);
  const int32_t running = found == in_flight_.end() ? 0 : found->second;
  if (opts_.max_requests > 0 && running + requests > opts_.max_requests)
    throw ApiError(429, "rate_limit_error", "", "tenant_request_limit",
                   fmt::format("this API key's tenant has {} requests waiting or running, its limit is {} "
                               "(--max-requests-per-tenant); retry later",
                               running, opts_.max_requests));
  if (opts_.tokens_per_minute > 0) {
    const double capacity = opts_.burst_tokens > 0 ? opts_.burst_tokens : opts_.tokens_per_minute;
    const double per_second = opts_.tokens_per_minute / 60.0;
    Bucket& b = buckets_.try_emplace(tenant, Bucket{capacity, now}).first->second;
    b.tokens = std::min(capacity, b.tokens + per_second * std::chrono::duration<double>(now - b.refilled).count());
    b.refilled = now;
    const double want = static_cast<double>(tokens);
    if (want > capacity)
      throw ApiError(429, "rate_limit_error", "", "tenant_rate_limit",
                     fmt::format("the request may use {} tokens (prompt + max_tokens), more than this tenant's "
                                 "bucket of {} tokens ever holds; lower max_tokens",
                                 tokens, capacity));
    if (want > b.tokens) {
      const int wait_s = static_cast<int>(std::ceil((want - b.tokens) / per_second));
      ApiError e(429, "rate_limit_error", "", "tenant_rate_limit",
                 fmt::format("this tenant's token rate ({} tokens/min) is spent; the request (prompt + max_tokens = "
                             "{}) fits in {} s",
                             opts_.tokens_per_minute, tokens, wait_s));
      e.set_retry_after(std::max(wait_s, 1));
      throw e;
    }
    b.tokens -= want;
  }
  in_flight_[tenant] += requests;
  return std::make_shared<Slot>(*this, Counted::Requests, tenant, requests);
}

std::shared_ptr<TenantLimits::Slot> TenantLimits::connect(const std::string& tenant) {
  MutexLock lock(mutex_);
  int32_t& open = connections_[tenant];
  if (opts_.max_connections > 0 && open >= opts_.max_connections) {
    const int32_t held = open;
    if (held == 0) connections_.erase(tenant);
    throw ApiError(503, "server_error", "", "too_many_connections",
                   fmt::format("this API key's tenant holds {} open connections, its limit is {} "
                               "(--max-connections-per-tenant); retry later",
                               held, opts_.max_connections));
  }
  ++open;
  return std::make_shared<Slot>(*this, Counted::Connections, tenant, 1);
}

void TenantLimits::release(Counted what, const std::string& tenant, int32_t n) {
  MutexLock lock(mutex_);
  auto& counts = what == Counted::Requests ? in_flight_ : connections_;
  auto it = counts.find(tenant);
  if (it == counts.end()) return;
  if ((it->second -= n) <= 0) counts.erase(it);
}

int32_t TenantLimits::connections(const std::string& tenant) const {
  MutexLock lock(mutex_);
  auto it = connections_.find(tenant);
  return it == connections_.end() ? 0 : it->second;
}

int32_t TenantLimits::in_flight(const std::string& tenant) const {
  MutexLock lock(mutex_);
  auto it = in_flight_.find(tenant);
  return it == in_flight_.end() ? 0 : it->second;
}

}  // namespace seer::server
