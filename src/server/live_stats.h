#pragma once
// What the live view (GET /, docs/serving.md "Live view") shows, as one JSON
// snapshot for GET /v1/state: queues, KV blocks per tier, tokens per iteration split
// into prefill and decode, and TTFT/TBT percentiles of recent requests.
// Thread-safe: the engine thread records, HTTP threads read.
#include <cstdint>
#include <deque>

#include <nlohmann/json.hpp>

#include "common/thread_annotations.h"

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
  void record_ttft(double s);
  void record_tbt(double s);

  // {"queues": {waiting, running, swapped}, "kv": {device: {used, total}, host: ...},
  //  "iterations": {count, prefill_tokens, decode_tokens, last: {prefill, decode}},
  //  "ttft_s"/"tbt_s": {count, p50, p90, p99}} — counters are cumulative.
  nlohmann::json snapshot() const;

  static constexpr size_t kWindow = 2048;  // latency samples kept for percentiles

 private:
  mutable Mutex mutex_;
  EngineSnapshot engine_ GUARDED_BY(mutex_);
  int64_t iterations_ GUARDED_BY(mutex_) = 0;
  int64_t prefill_tokens_ GUARDED_BY(mutex_) = 0;
  int64_t decode_tokens_ GUARDED_BY(mutex_) = 0;
  int32_t last_prefill_ GUARDED_BY(mutex_) = 0;
  int32_t last_decode_ GUARDED_BY(mutex_) = 0;
  std::deque<double> ttft_ GUARDED_BY(mutex_);
  std::deque<double> tbt_ GUARDED_BY(mutex_);
};

}  // namespace seer::server
