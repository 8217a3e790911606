#pragma once
// Conversation-cache series of /metrics (docs/pensieve.md):
//   seer_cache_hit_tokens_total{tier}, seer_cache_history_tokens_total,
//   seer_cache_recomputed_tokens_total, seer_cache_dropped_tokens_total,
//   seer_cache_swapped_bytes_total{direction}, seer_kv_blocks_used{tier},
//   seer_conversations_cached.
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "server/prometheus.h"

namespace seer::server {

// Publishes the current values (engine thread, after each step).
void publish_cache_metrics(MetricsRegistry& registry, const KvManager& kv, const ConversationCache* cache);

}  // namespace seer::server
