#include "kv/conversation_cache_config.h"

#include "common/error.h"

namespace seer {

EvictionPolicy parse_eviction_policy(const std::string& name) {
  if (name == "pensieve") return EvictionPolicy::Pensieve;
  if (name == "lru") return EvictionPolicy::Lru;
  fail("--eviction: unknown policy '{}' (expected pensieve or lru)", name);
}

const char* eviction_policy_name(EvictionPolicy p) { return p == EvictionPolicy::Lru ? "lru" : "pensieve"; }

CacheCounters& CacheCounters::operator+=(const CacheCounters& o) {
  lookup_tokens += o.lookup_tokens;
  history_tokens += o.history_tokens;
  hit_tokens_device += o.hit_tokens_device;
  hit_tokens_host += o.hit_tokens_host;
  recomputed_tokens += o.recomputed_tokens;
  dropped_tokens += o.dropped_tokens;
  swapped_out_bytes += o.swapped_out_bytes;
  swapped_in_bytes += o.swapped_in_bytes;
  return *this;
}

CacheCounters stateless_cache_counters(int64_t prompt_tokens, int64_t history_tokens) {
  CacheCounters c;
  c.lookup_tokens = prompt_tokens;
  c.history_tokens = history_tokens;
  c.recomputed_tokens = history_tokens;
  return c;
}

}  // namespace seer
