#pragma once
// What a conversation cache is built with (ConversationCacheConfig) and what it
// counts (CacheCounters): the types the cache's parts (kv/conversation_index.h,
// kv/tier_evictor.h) and its readers share without the cache itself.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "kv/shared_tier.h"

namespace seer {

enum class EvictionPolicy { Pensieve, Lru };
EvictionPolicy parse_eviction_policy(const std::string& name);  // "pensieve" | "lru"; throws seer::Error
const char* eviction_policy_name(EvictionPolicy p);

// Cost of recomputing a chunk that starts at context position `l` (any unit; only
// ratios matter).
using ChunkCostFn = std::function<double(int32_t position)>;

struct ConversationCacheConfig {
  bool keep_kv = true;              // false: histories only (stateless policies in serving)
  bool host_tier = true;            // false: device-only cache, evicted means dropped
  bool prefix_reuse = false;        // match histories by chained block hashes, too
  int32_t chunk_tokens = 32;        // eviction granularity, rounded up to whole blocks
  double swap_out_threshold = 0.25; // swap out ahead of time below this free device share
  EvictionPolicy eviction = EvictionPolicy::Pensieve;
  ChunkCostFn chunk_cost;           // empty: position + 4096 (attention + a constant)
  // Entries kept, all tenants together (0: no limit) and per tenant (0: the shared
  // cap only); beyond them the fullest tenant loses one (kv/conversation_quota.h).
  int32_t max_conversations = 0;
  int32_t max_conversations_per_tenant = 0;
  size_t max_tombstones = 4096;     // evicted conversation names remembered
  double idle_expiry_s = 0;         // 0: never
  // The tier below the host (kv/shared_tier.h, docs/replicas.md): chunks dropped
  // from the last local tier are written there, every finished turn's history too,
  // and restore_from_shared() brings stored chunks back onto the host tier. Not
  // owned; nullptr: none.
  SharedTier* shared = nullptr;
  bool shared_write_through = false;  // also store every finished turn's KV
};

struct CacheCounters {
  int64_t lookup_tokens = 0;      // prompt tokens of admitted requests (each counted once)
  // Of those, tokens from the conversation's earlier turns (Request::
  // conversation_history_len: the history the engine prepended, the caller gave, or
  // the cache matched).
  int64_t history_tokens = 0;
  int64_t hit_tokens_device = 0;  // reused without a copy
  int64_t hit_tokens_host = 0;    // reused after a swap-in
  // History tokens computed again: each turn's history minus the tokens it reused.
  // The whole history on a stateless server; dropped and unmatched history on a
  // caching one (docs/pensieve.md, Metrics).
  int64_t recomputed_tokens = 0;
  int64_t dropped_tokens = 0;     // tokens evicted from the last tier
  int64_t swapped_out_bytes = 0;
  int64_t swapped_in_bytes = 0;
  double hit_rate() const {
    return lookup_tokens > 0 ? static_cast<double>(hit_tokens_device + hit_tokens_host) / lookup_tokens : 0.0;
  }
  CacheCounters& operator+=(const CacheCounters& o);  // sums every counter (replica sets)
};

// The counters of a server without a cache (the simulator's stateless policies):
// every history token is computed again.
CacheCounters stateless_cache_counters(int64_t prompt_tokens, int64_t history_tokens);

}  // namespace seer
