#pragma once
// What the live view (GET /, docs/serving.md "Live view") shows, as one JSON
// snapshot for GET /v1/state: queues, KV blocks per tier, tokens per iteration split
// into prefill and decode, and TTFT/TBT percentiles of recent requests.
// Thread-safe: the engine thread records, HTTP threads read.
#include <cstdint>
#include <deque>
#include <mutex>

#include <nlohmann/json.hpp>

namespace seer::server {

struct EngineSnapshot {
  int64_t waiting = 0;
  int64_t running = 0;
  int64_t swapped = 0;
  int64_t kv_device_used = 0;
  int64_t kv_device_total = 0;
  int64_t kv_host_used = 0;
  int64_t kv_host_total = 0;
};

class LiveStats {
 public:
  void record_engine(const EngineSnapshot& s);
  void record_iteration(int32_t prefill_tokens, int32_t decode_tokens);
  void record_ttft(double s) { push(ttft_, s); }
  void record_tbt(double s) { push(tbt_, s); }

  // {"queues": {waiting, running, swapped}, "kv": {device: {used, total}, host: ...},
  //  "iterations": {count, prefill_tokens, decode_tokens, last: {prefill, decode}},
  //  "ttft_s"/"tbt_s": {count, p50, p90, p99}} — counters are cumulative.
  nlohmann::json snapshot() const;

  static constexpr size_t kWindow = 2048;  // latency samples kept for percentiles

 private:
  void push(std::deque<double>& ring, double v);

  mutable std::mutex mutex_;
  EngineSnapshot engine_;             // guarded by mutex_
  int64_t iterations_ = 0;            // guarded by mutex_
  int64_t prefill_tokens_ = 0;        // guarded by mutex_
  int64_t decode_tokens_ = 0;         // guarded by mutex_
  int32_t last_prefill_ = 0;          // guarded by mutex_
  int32_t last_decode_ = 0;           // guarded by mutex_
  std::deque<double> ttft_, tbt_;     // guarded by mutex_
};

}  // namespace seer::server
