#pragma once
// The interface of a KV tier shared by several replicas, below their host tiers
// (docs/replicas.md, docs/deploy.md). The conversation cache (kv/conversation_cache.h)
// talks only to this: it stores chunks its last local tier drops (and, with
// write-through, every finished turn's KV; always the history) and
// restore_from_shared() brings stored leading chunks back onto its host tier.
//
// Two implementations: SharedKvTier (kv/shared_kv_tier.h), the simulator's
// bookkeeping model, and RedisKvStore (server/redis_kv_store.h), the real store of
// `seer serve --shared-kv`, which moves the blocks' bytes.
//
// Called on the thread that owns the conversation cache (the engine thread).
#include <cstdint>
#include <span>
#include <string>

#include "kv/kv_types.h"

namespace seer {

// Where one logical block of the KV being stored lives at the moment of the call.
// block < 0: its data is not readable now (dropped, or a swap-out still in flight).
struct KvBlockRef {
  KvTier tier = KvTier::Device;
  int32_t block = -1;
};

class SharedTier {
 public:
  virtual ~SharedTier() = default;

  // True when store() needs `blocks` (a tier that moves the bytes); a bookkeeping
  // model gets them empty and saves the caller building them.
  virtual bool needs_block_data() const { return false; }
  // Stores the leading `kv_tokens` of `tokens` (the conversation's whole history)
  // for `conversation`; blocks[i] locates logical block i (when needs_block_data()).
  // A reader uses whole blocks only; the history itself is always stored.
  virtual void store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens,
                     std::span<const KvBlockRef> blocks, double now) = 0;
  // Leading tokens of `conversation` whose K/V is stored and matches `prompt` (0: none).
  virtual int32_t stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const = 0;
  // The stored history (empty when unknown).
  virtual std::span<const int32_t> history(const std::string& conversation) const = 0;
  // restore_from_shared() placed the leading `tokens` (host_blocks.size() whole
  // blocks) of `conversation` on these host blocks: their data must be there
  // before the next plan executes. tokens == 0: a lookup that found nothing (a miss).
  virtual void restored(const std::string& conversation, int32_t tokens, std::span<const int32_t> host_blocks,
                        double now) = 0;
  // Forgets what has been idle too long (a tier without a TTL does nothing).
  virtual void expire(double now) {}
  // Forgets `conversation` entirely: history and K/V, also what other replicas
  // stored of it (a user deleted it). Never blocks.
  virtual void erase(const std::string& conversation) = 0;
};

}  // namespace seer
