#pragma once
// The simulator's model of the shared KV tier (kv/shared_tier.h, docs/replicas.md):
// a network store (Redis in a deployment) keyed by conversation and chunk
// position, with the same byte cap and idle TTL as `seer serve --shared-kv`.
//
// Bookkeeping only, like the KvManager: per conversation its token history and
// how many leading tokens are stored (chunks are written from the leading end,
// so what is stored is always a prefix). The time a transfer takes is the
// caller's (the simulator's replica set charges latency + bytes / bandwidth).
// The real store (server/redis_kv_store.h) keeps the same index of what it wrote, to
// write only new chunks and to enforce the same cap.
//
// Not thread-safe: one thread (the simulator's loop, or the engine thread) owns it.
#include <cstdint>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "kv/shared_tier.h"

namespace seer {

struct SharedTierCounters {
  int64_t stored_chunks = 0;   // chunk writes (a chunk rewritten counts again)
  int64_t stored_bytes = 0;
  int64_t fetches = 0;         // restores that brought at least one chunk
  int64_t fetched_tokens = 0;
  int64_t fetched_bytes = 0;
  int64_t misses = 0;          // lookups of a conversation with nothing stored
  int64_t evicted_conversations = 0;  // over the byte cap (oldest first)
  int64_t expired_conversations = 0;  // idle for longer than the TTL
};

struct SharedTierLimits {
  int64_t max_bytes = 0;  // cap on the K/V bytes stored; 0: none
  double ttl_s = 0;       // forget a conversation idle (no store, no fetch) this long; 0: never
};

// What one store() changed: K/V tokens [first_token, end_token) are new (whole
// chunks from first_token, which is chunk-aligned), and these conversations were
// evicted to stay under the cap.
struct SharedStoreDelta {
  int32_t first_token = 0;
  int32_t end_token = 0;
  bool history_changed = false;
  std::vector<std::pair<std::string, int32_t>> evicted;  // name, history tokens it had
};

class SharedKvTier final : public SharedTier {
 public:
  // `bytes_per_token`: K/V bytes of one token over all layers; `chunk_tokens`:
  // the write granularity (a whole chunk is one key). Throws seer::Error for bad sizes.
  SharedKvTier(int64_t bytes_per_token, int32_t chunk_tokens, SharedTierLimits limits = {});

  // Records a store and says what is new (the real store writes exactly that).
  SharedStoreDelta record(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens,
                          double now);
  void store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens, double now = 0) {
    record(conversation, tokens, kv_tokens, now);
  }
  void store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens,
             std::span<const KvBlockRef>, double now) override {
    record(conversation, tokens, kv_tokens, now);
  }
  int32_t stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const override;
  int32_t stored_tokens(const std::string& conversation) const;
  std::span<const int32_t> history(const std::string& conversation) const override;
  void restored(const std::string& conversation, int32_t tokens, std::span<const int32_t> host_blocks,
                double now) override;
  // Forgets conversations idle for longer than the TTL; returns their names.
  std::vector<std::string> expire_idle(double now);
  void expire(double now) override { expire_idle(now); }
  // Forgets one conversation (e.g. its keys turned out corrupt).
  void forget(const std::string& conversation);
  void erase(const std::string& conversation) override { forget(conversation); }
  // A replica read `tokens` (0: a miss).
  void note_fetch(int32_t tokens);

  int64_t bytes_per_token() const { return bytes_per_token_; }
  int32_t chunk_tokens() const { return chunk_tokens_; }
  const SharedTierLimits& limits() const { return limits_; }
  const SharedTierCounters& counters() const { return counters_; }
  size_t num_conversations() const { return entries_.size(); }
  int64_t stored_bytes_now() const { return bytes_now_; }  // what is stored at present

 private:
  struct Entry {
    std::vector<int32_t> tokens;
    int32_t stored = 0;  // leading tokens whose K/V is stored
    double last_active = 0;
  };
  void remove(std::unordered_map<std::string, Entry>::iterator it);

  int64_t bytes_per_token_;
  int32_t chunk_tokens_;
  SharedTierLimits limits_;
  SharedTierCounters counters_;
  int64_t bytes_now_ = 0;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace seer
