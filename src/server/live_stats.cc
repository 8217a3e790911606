#include "server/live_stats.h"

#include <algorithm>
#include <vector>

namespace seer::server {

namespace {

nlohmann::json percentiles(const std::deque<double>& ring) {
  std::vector<double> v(ring.begin(), ring.end());
  std::sort(v.begin(), v.end());
  auto at = [&](double q) {
    return v.empty() ? 0.0 : v[std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())))];
  };
  return {{"count", v.size()}, {"p50", at(0.5)}, {"p90", at(0.9)}, {"p99", at(0.99)}};
}

void push_bounded(std::deque<double>& ring, double v, size_t window) {
  ring.push_back(v);
  if (ring.size() > window) ring.pop_front();
}

}  // namespace

void LiveStats::record_engine(const EngineSnapshot& s) {
  MutexLock lock(mutex_);
  engine_ = s;
}

void LiveStats::record_iteration(int32_t prefill_tokens, int32_t decode_tokens) {
  MutexLock lock(mutex_);
  ++iterations_;
  prefill_tokens_ += prefill_tokens;
  decode_tokens_ += decode_tokens;
  last_prefill_ = prefill_tokens;
  last_decode_ = decode_tokens;
}

void LiveStats::record_ttft(double s) {
  MutexLock lock(mutex_);
  push_bounded(ttft_, s, kWindow);
}

void LiveStats::record_tbt(double s) {
  MutexLock lock(mutex_);
  push_bounded(tbt_, s, kWindow);
}

nlohmann::json LiveStats::snapshot() const {
  MutexLock lock(mutex_);
  return {
      {"queues", {{"waiting", engine_.waiting}, {"running", engine_.running}, {"swapped", engine_.swapped}}},
      {"kv",
       {{"device", {{"used", engine_.kv_device_used}, {"total", engine_.kv_device_total}}},
        {"host", {{"used", engine_.kv_host_used}, {"total", engine_.kv_host_total}}}}},
      {"iterations",
       {{"count", iterations_},
        {"prefill_tokens", prefill_tokens_},
        {"decode_tokens", decode_tokens_},
        {"last", {{"prefill", last_prefill_}, {"decode", last_decode_}}}}},
      {"ttft_s", percentiles(ttft_)},
      {"tbt_s", percentiles(tbt_)},
  };
}

}  // namespace seer::server
