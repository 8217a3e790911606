#pragma once
// Pensieve's conversation cache (docs/pensieve.md): KV owned by finished turns
// rather than by requests, kept over the device and host tiers and evicted by
// recompute cost.
//
// An entry (kv/conversation_entry.h) holds a token history and a KvManager table
// under a cache owner (KvOwner::cache), its blocks laid out from the leading end:
// dropped, host only, on both tiers, device only. Eviction (kv/tier_evictor.h)
// takes the leading chunk of a tier, `chunk_tokens` long (a whole number of blocks).
//
// Entries are found (kv/conversation_index.h) by conversation id, or (prefix reuse;
// anonymous entries only) by chained hashes of the full blocks of a prompt; a match
// is always verified token by token. Every entry belongs to a tenant
// (docs/security.md): a lookup only ever finds entries of its own tenant, by name or
// by hash.
//
// A match is attached to the request that continues the history. A named
// conversation moves: its table goes to that request and becomes resident (swap-in,
// refill of dropped blocks), and the entry leaves the cache until the request
// finishes and hands its KV back. An anonymous entry (a system prompt, a stateless
// client's history) stays and is shared block by block (KvManager::share_prefix):
// any number of running requests reference its device blocks, so N requests with
// one prompt hold its K/V once. Blocks a running request references are pinned:
// eviction passes over them, since dropping the cache's reference frees nothing.
// Sharing copies a partial last block; when the pool cannot spare that copy, the
// scheduler takes the anonymous entry whole instead (CacheMatch::exclusive).
//
// The shared tier below the host (config.shared) is reached through the bridge
// operations below (kv/shared_tier_bridge.cc).
//
// Single-threaded: the engine thread owns it and its parts, like the KvManager.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/conversation_cache_config.h"
#include "kv/conversation_entry.h"
#include "kv/conversation_index.h"
#include "kv/conversation_quota.h"
#include "kv/kv_manager.h"
#include "kv/tier_evictor.h"

namespace seer {

struct CacheMatch {
  KvOwner owner;       // the entry's KV owner
  int32_t tokens = 0;   // leading prompt tokens whose K/V the entry supplies
  int32_t dropped_tokens = 0;  // of those, leading ones to recompute
  // The entry's table moves to the request (a named conversation always; an
  // anonymous entry when the scheduler cannot afford the copies sharing costs).
  // False: the request shares the entry's blocks and the entry stays.
  bool exclusive = false;
};

struct AttachResult {
  int32_t computed_tokens = 0;  // K/V present (including the dropped leading ones)
  int32_t dropped_tokens = 0;   // leading tokens to recompute, block-aligned
  int32_t history_tokens = 0;   // the entry's whole history length
};

class ConversationCache {
 public:
  ConversationCache(KvManager& kv, ConversationCacheConfig config);
  ConversationCache(const ConversationCache&) = delete;
  ConversationCache& operator=(const ConversationCache&) = delete;
  ~ConversationCache();

  const ConversationCacheConfig& config() const { return config_; }
  const CacheCounters& counters() const { return counters_; }
  size_t num_conversations() const { return entries_.size(); }
  [[nodiscard]] bool contains(const std::string& conversation) const { return index_.named(conversation).has_value(); }
  // True once for a named conversation this cache evicted (a cap, the idle TTL)
  // rather than deleted: its next turn is refused, not continued
  // with an empty history. Never with a shared tier, which keeps every history.
  [[nodiscard]] bool take_evicted(const std::string& conversation) { return quota_.take_tombstone(conversation); }
  int32_t tenant_entries(const std::string& tenant) const { return quota_.entries(tenant); }
  // The token history of a conversation (empty when unknown).
  std::span<const int32_t> history(const std::string& conversation) const;
  // Device blocks of cache entries that can be freed without a copy.
  int32_t clean_device_blocks() const { return evictor_.clean_blocks(); }
  // Blocks of all entries on tier t; on the device only those no running request
  // shares: what make_room() frees when asked for everything.
  int32_t blocks(KvTier t) const;

  // ---- Engine side.
  // Request `id` of `tenant` ended: `tokens` is its sequence (or the part to
  // remember), of which the first `kv_tokens` have K/V in its table, the first
  // `dropped_tokens` of those invalid. Its KV becomes the entry of `conversation`
  // ("" : an anonymous entry, kept only with prefix reuse) or is freed.
  void release(RequestId id, const std::string& tenant, const std::string& conversation,
               std::span<const int32_t> tokens, int32_t kv_tokens, int32_t dropped_tokens, double now);
  // Frees the conversation's entry and has the shared tier forget it too. False when
  // unknown here and there is no shared tier (which cannot say at once what it held).
  bool erase(const std::string& conversation);
  // Frees entries idle for longer than idle_expiry_s.
  void expire(double now);
  // Forgets every entry without touching the KV manager, whose tables the caller
  // resets (an engine recovering from a failure). The counters are kept.
  void forget_all();

  // ---- Scheduler side.
  // The longest cached prefix of `prompt` among `tenant`'s entries (at most
  // prompt.size() - 1 tokens, so one token is left to compute), by conversation id
  // first, then by block hashes.
  [[nodiscard]] std::optional<CacheMatch> match(const std::string& tenant, const std::string& conversation,
                                  std::span<const int32_t> prompt);
  // A request was admitted (once per request): `prompt_tokens` of which
  // `history_tokens` came from earlier turns and `reused_tokens` had valid K/V here.
  void note_lookup(int32_t prompt_tokens, int32_t history_tokens, int32_t reused_tokens);
  // Device blocks attach() takes from the available pool.
  int32_t attach_blocks_needed(const CacheMatch& m) const;
  // Gives request `id` the match's KV, resident on the device: a named entry's
  // table moves, an anonymous entry's blocks are shared (see the header). Fails,
  // changing nothing, when too few device blocks are available.
  [[nodiscard]] std::optional<AttachResult> attach(const CacheMatch& m, RequestId id, std::vector<KvOp>& ops,
                                                   double now);
  // Ahead-of-time swap-out: copies the lowest-value device chunks to the host while
  // free (plus clean) device blocks are below the threshold.
  void maintain(double now, std::vector<KvOp>& ops) { evictor_.maintain(now, ops); }
  // Frees up to `blocks` device blocks: clean copies first, then eviction (swap
  // out or drop). Never touches `keep` (an owner being attached). Returns the
  // number freed.
  int32_t make_room(int32_t blocks, double now, std::vector<KvOp>& ops, std::optional<KvOwner> keep = std::nullopt) {
    return evictor_.make_room(blocks, now, ops, keep);
  }

  // ---- Shared tier (config.shared; kv/shared_tier_bridge.cc).
  // Leading tokens of `prompt` that restore_from_shared() would fetch: the stored
  // prefix when this cache holds no KV of the conversation, or the dropped leading
  // blocks of its entry when the stored prefix covers them; whole blocks only.
  int32_t shared_restorable_tokens(const std::string& conversation, std::span<const int32_t> prompt) const;
  // Fetches those tokens onto the host tier (making host room by eviction first);
  // the caller charges the transfer. Returns the tokens restored (0 when nothing
  // was stored or the host tier has no room; either is reported to the shared
  // tier as a miss).
  int32_t restore_from_shared(const std::string& conversation, std::span<const int32_t> prompt, double now);
  // True when the shared tier could add something for `conversation`: this cache
  // holds no KV of it, or its entry has dropped leading blocks.
  [[nodiscard]] bool wants_shared(const std::string& conversation) const;
  // Adopts `history` (from the shared tier) as the conversation's history without
  // KV, when this cache does not know the conversation. False otherwise.
  [[nodiscard]] bool adopt_history(const std::string& conversation, std::span<const int32_t> history, double now);
  // The executor ran the last plan: the host copies its swap-outs made are readable.
  void plan_executed() { evictor_.plan_executed(); }

  // Layout and index consistency of every entry (KvManager checks the blocks).
  // Throws std::logic_error.
  void check_invariants() const;

 private:
  using Entry = ConversationEntry;
  enum class Removal { Dropped, Evicted };  // Evicted: a named one leaves a tombstone

  // The entry of a named conversation, or nullptr.
  Entry* named_entry(const std::string& conversation);
  const Entry* named_entry(const std::string& conversation) const;
  void count_hits(const Entry& e, int32_t tokens);
  // Removes older anonymous entries whose whole KV `e` (just released) also holds.
  void remove_covered_by(const Entry& e);
  void remove(KvOwner owner, Removal why = Removal::Dropped);  // frees the KV too
  Entry& insert(Entry e);  // indexes, tracks and counts it
  void enforce_quota(const std::string& tenant, KvOwner keep);
  Entry* find_by_hash(const std::string& tenant, std::span<const int32_t> prompt);

  KvManager& kv_;
  ConversationCacheConfig config_;
  CacheCounters counters_;
  ConversationQuota quota_;
  std::unordered_map<KvOwner, Entry, KvOwnerHash> entries_;
  ConversationIndex index_;
  TierEvictor evictor_;  // holds pointers into entries_
  // Cache owner ids -1, -2, ...: the numbering they always had, which fixes the order
  // the maps keyed by owner iterate in, and so how eviction breaks ties.
  int64_t next_cache_id_ = -1;
};

}  // namespace seer
