#include "server/cache_metrics.h"

namespace seer::server {

void publish_cache_metrics(MetricsRegistry& registry, const KvManager& kv, const ConversationCache* cache) {
  const char* cached_help = "KV blocks the conversation / prefix cache holds, evicted on demand (unlabelled: device tier).";
  for (KvTier t : {KvTier::Device, KvTier::Host}) {
    const int32_t cached = cache ? cache->blocks(t) : 0;
    registry.gauge("seer_kv_blocks_used", "KV blocks requests hold (unlabelled: device tier).", {{"tier", kv_tier_name(t)}})
        .set(kv.usage().tier(t).used() - cached);
    registry.gauge("seer_kv_blocks_cached", cached_help, {{"tier", kv_tier_name(t)}}).set(cached);
  }
  registry.gauge("seer_kv_blocks_cached", cached_help).set(cache ? cache->blocks(KvTier::Device) : 0);
  if (!cache) return;
  const CacheCounters& c = cache->counters();
  const char* hit_help = "Prompt tokens whose K/V came from the conversation / prefix cache.";
  registry.counter("seer_cache_hit_tokens_total", hit_help, {{"tier", "device"}}).advance_to(c.hit_tokens_device);
  registry.counter("seer_cache_hit_tokens_total", hit_help, {{"tier", "host"}}).advance_to(c.hit_tokens_host);
  registry.counter("seer_cache_history_tokens_total", "Prompt tokens from a conversation's earlier turns.")
      .advance_to(c.history_tokens);
  registry.counter("seer_cache_recomputed_tokens_total",
                   "History tokens computed again: each turn's history minus the tokens it reused.")
      .advance_to(c.recomputed_tokens);
  registry.counter("seer_cache_dropped_tokens_total", "Cached tokens evicted from the last tier.")
      .advance_to(c.dropped_tokens);
  const char* swap_help = "Conversation-cache KV bytes moved between tiers.";
  registry.counter("seer_cache_swapped_bytes_total", swap_help, {{"direction", "out"}}).advance_to(c.swapped_out_bytes);
  registry.counter("seer_cache_swapped_bytes_total", swap_help, {{"direction", "in"}}).advance_to(c.swapped_in_bytes);
  registry.gauge("seer_conversations_cached", "Conversations (and reusable histories) in the cache.")
      .set(static_cast<double>(cache->num_conversations()));
}

}  // namespace seer::server
