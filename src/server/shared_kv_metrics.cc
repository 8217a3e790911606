#include "server/shared_kv_metrics.h"

namespace seer::server {

Histogram& shared_kv_latency_histogram(MetricsRegistry& registry) {
  return registry.histogram("seer_shared_kv_latency_seconds", "Duration of one shared KV tier (Redis) round trip.",
                            {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1});
}

void publish_shared_kv_metrics(MetricsRegistry& registry, const SharedKvCounters& c) {
  registry.counter("seer_shared_kv_hits_total", "Restores that brought K/V back from the shared tier.")
      .advance_to(static_cast<double>(c.hits.load()));
  registry.counter("seer_shared_kv_misses_total", "Shared-tier lookups that brought no K/V.")
      .advance_to(static_cast<double>(c.misses.load()));
  registry.counter("seer_shared_kv_hit_tokens_total", "Prompt tokens whose K/V came from the shared tier.")
      .advance_to(static_cast<double>(c.hit_tokens.load()));
  registry.counter("seer_shared_kv_histories_total", "Shared-tier lookups that found the conversation's history.")
      .advance_to(static_cast<double>(c.histories.load()));
  const char* bytes_help = "Bytes moved between this replica and the shared tier.";
  registry.counter("seer_shared_kv_bytes_total", bytes_help, {{"direction", "read"}})
      .advance_to(static_cast<double>(c.bytes_read.load()));
  registry.counter("seer_shared_kv_bytes_total", bytes_help, {{"direction", "write"}})
      .advance_to(static_cast<double>(c.bytes_written.load()));
  registry.counter("seer_shared_kv_errors_total", "Failed shared-tier calls (Redis down, timeout, error reply).")
      .advance_to(static_cast<double>(c.errors.load()));
  const char* bad_help = "Shared-tier entries rejected (recomputed instead).";
  registry.counter("seer_shared_kv_corrupt_total", bad_help, {{"kind", "corrupt"}})
      .advance_to(static_cast<double>(c.corrupt.load()));
  registry.counter("seer_shared_kv_corrupt_total", bad_help, {{"kind", "stale"}})
      .advance_to(static_cast<double>(c.stale.load()));
  registry.counter("seer_shared_kv_erased_total", "Conversations deleted from the shared tier (DELETE).")
      .advance_to(static_cast<double>(c.erased.load()));
  registry.counter("seer_shared_kv_dropped_writes_total", "Shared-tier writes dropped (queue full or Redis down).")
      .advance_to(static_cast<double>(c.dropped_writes.load()));
}

}  // namespace seer::server
