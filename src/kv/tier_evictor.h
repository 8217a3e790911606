#pragma once
// The conversation cache's eviction over the device and host tiers
// (docs/pensieve.md): which entry's leading chunk of a tier goes next (the lowest
// value: recompute cost over idle time, or least recently active), ahead-of-time
// swap-out, and freeing device blocks on demand (clean copies first, then swap-out
// or drop). A chunk dropped from the last local tier is written to the shared tier
// below, when there is one. It keeps the entries that hold a block on some tier
// (the only candidates), the count of clean device blocks, and the host blocks whose
// swap-out has not run yet.
//
// Single-threaded, like the cache that owns it; it never adds or removes entries.
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv/conversation_cache_config.h"
#include "kv/conversation_entry.h"
#include "kv/kv_manager.h"

namespace seer {

class TierEvictor {
 public:
  // `config` and `counters` are the cache's (they outlive the evictor).
  TierEvictor(KvManager& kv, const ConversationCacheConfig& config, CacheCounters& counters)
      : kv_(kv), config_(config), counters_(counters) {}
  TierEvictor(const TierEvictor&) = delete;
  TierEvictor& operator=(const TierEvictor&) = delete;

  // Keeps the candidates up to date after e's cursors changed (or e was placed).
  void track(ConversationEntry& e);
  // e leaves the cache: no longer a candidate, its clean blocks no longer counted.
  void forget(const ConversationEntry& e);
  void clear();
  // Device blocks of cache entries that can be freed without a copy.
  int32_t clean_blocks() const { return clean_blocks_; }
  // The executor ran the last plan: the host copies its swap-outs made are readable.
  void plan_executed() { unsettled_host_.clear(); }

  // Ahead-of-time swap-out: copies the lowest-value device chunks to the host while
  // free (plus clean) device blocks are below the threshold.
  void maintain(double now, std::vector<KvOp>& ops);
  // Frees up to `blocks` device blocks, never from `keep`; returns the number freed.
  int32_t make_room(int32_t blocks, double now, std::vector<KvOp>& ops, std::optional<KvOwner> keep);
  // Drops the lowest-value leading host chunks (each worth less than `below`) until
  // `blocks` host blocks are free. False when that is not possible.
  [[nodiscard]] bool ensure_host_room(int32_t blocks, double now, std::optional<KvOwner> keep,
                                      double below = std::numeric_limits<double>::infinity());
  // Where logical blocks [0, n) of `owner` live now, for a shared tier that reads them.
  std::vector<KvBlockRef> block_refs(KvOwner owner, int32_t n) const;

  // For the cache's invariant check: e is a candidate exactly when it holds a block.
  [[nodiscard]] bool tracks(const ConversationEntry& e) const;
  size_t num_tracked() const { return with_kv_.size(); }

 private:
  enum class Victim { DeviceChunk, CleanChunk, LeadingChunk };

  int32_t chunk_blocks() const;
  int32_t tokens_in_block(const ConversationEntry& e, int32_t block) const;
  double value(const ConversationEntry& e, int32_t block, double now) const;
  ConversationEntry* lowest(Victim kind, double now, std::optional<KvOwner> keep);
  [[nodiscard]] bool swap_out_chunk(ConversationEntry& e, std::vector<KvOp>& ops);
  int32_t reclaim_chunk(ConversationEntry& e, int32_t max_blocks);
  int32_t drop_chunk(ConversationEntry& e);  // returns device blocks freed

  KvManager& kv_;
  const ConversationCacheConfig& config_;
  CacheCounters& counters_;
  // The entries holding a block on some tier (dropped < num_blocks): the only
  // candidates of eviction, scanned instead of every history kept. The cache's
  // owner numbering fixes the order they iterate in, and so how eviction breaks ties.
  std::unordered_map<KvOwner, ConversationEntry*, KvOwnerHash> with_kv_;
  int32_t clean_blocks_ = 0;
  // Host blocks written by swap-out ops of a plan that has not run yet.
  std::unordered_set<int32_t> unsettled_host_;
};

}  // namespace seer
