#pragma once
// A KV tier shared by several replicas, below their host tiers (docs/replicas.md):
// a network store (Redis in a deployment) keyed by conversation and chunk
// position. Conversation caches write chunks here when their last local tier
// drops them (and, with write-through, every finished turn's KV); a replica
// that receives a turn of a conversation it does not hold fetches the stored
// leading chunks instead of recomputing them.
//
// Bookkeeping only, like the KvManager: per conversation its token history and
// how many leading tokens are stored (chunks are written from the leading end,
// so what is stored is always a prefix). The time a transfer takes is the
// caller's (the simulator's replica set charges latency + bytes / bandwidth).
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

namespace seer {

struct SharedTierCounters {
  int64_t stored_chunks = 0;   // chunk writes (a chunk rewritten counts again)
  int64_t stored_bytes = 0;
  int64_t fetches = 0;         // restores that brought at least one chunk
  int64_t fetched_tokens = 0;
  int64_t fetched_bytes = 0;
  int64_t misses = 0;          // lookups of a conversation with nothing stored
};

class SharedKvTier {
 public:
  // `bytes_per_token`: K/V bytes of one token over all layers; `chunk_tokens`:
  // the write granularity (a whole chunk is one key).
  SharedKvTier(int64_t bytes_per_token, int32_t chunk_tokens);

  // Stores the leading `kv_tokens` of `tokens` (the conversation's history) for
  // `conversation`, counting only the chunks not stored before. A history that
  // does not continue the stored one replaces it.
  void store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens);
  // Leading tokens of `conversation` stored and matching `prompt` (0: none).
  int32_t stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const;
  int32_t stored_tokens(const std::string& conversation) const;
  // The stored history (empty when unknown).
  std::span<const int32_t> history(const std::string& conversation) const;
  // A replica read `tokens` of `conversation` (0: a miss).
  void note_fetch(int32_t tokens);

  int64_t bytes_per_token() const { return bytes_per_token_; }
  int32_t chunk_tokens() const { return chunk_tokens_; }
  const SharedTierCounters& counters() const { return counters_; }
  size_t num_conversations() const { return entries_.size(); }

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    int32_t stored = 0;  // leading tokens whose K/V is stored
  };
  int64_t bytes_per_token_;
  int32_t chunk_tokens_;
  SharedTierCounters counters_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace seer
