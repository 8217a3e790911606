#pragma once
// Shared KV tier series of /metrics (`--shared-kv`, docs/deploy.md):
//   seer_shared_kv_hits_total, seer_shared_kv_misses_total,
//   seer_shared_kv_hit_tokens_total, seer_shared_kv_bytes_total{direction="read|write"},
//   seer_shared_kv_errors_total, seer_shared_kv_corrupt_total{kind="corrupt|stale"},
//   seer_shared_kv_dropped_writes_total, and the histogram
//   seer_shared_kv_latency_seconds (one Redis round trip).
#include "server/redis_kv_store.h"
#include "server/prometheus.h"

namespace seer::server {

// The latency histogram (created on first use); the store observes into it.
Histogram& shared_kv_latency_histogram(MetricsRegistry& registry);
// Publishes the counters' current values (engine thread, after each step).
void publish_shared_kv_metrics(MetricsRegistry& registry, const SharedKvCounters& c);

}  // namespace seer::server
