#pragma once
// How the conversation cache finds its entries (kv/conversation_cache.h): a named
// conversation by its id, an anonymous entry (prefix reuse) by the chained hashes
// of its full blocks. Hashes only name candidates; the cache verifies a match
// token by token. Every chain starts from a seed of the tenant, so equal prompts of
// two tenants never share a hash.
//
// Single-threaded, like the cache that owns it.
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kv/conversation_entry.h"
#include "kv/kv_types.h"

namespace seer {

class ConversationIndex {
 public:
  ConversationIndex(int32_t block_size, bool prefix_reuse) : block_size_(block_size), prefix_reuse_(prefix_reuse) {}

  // The entry of a named conversation.
  [[nodiscard]] std::optional<KvOwner> named(const std::string& conversation) const;
  size_t num_named() const { return by_name_.size(); }
  // Indexes `e`: a named entry by its name only, an anonymous one with KV by the
  // hashes of its full blocks (stored in e.hashes).
  void add(ConversationEntry& e);
  // Takes `e` out of the index (hashes a newer entry took over stay).
  void remove(const ConversationEntry& e);
  void clear();
  // Owners of anonymous entries whose hashes match the leading full blocks of
  // `tokens` (at most `max_blocks`), one per matching block, shortest prefix first.
  std::vector<KvOwner> hash_matches(const std::string& tenant, std::span<const int32_t> tokens,
                                    int32_t max_blocks) const;

 private:
  // The chained hash of each of the leading full blocks of `tokens` (at most `max_blocks`).
  std::vector<uint64_t> block_hashes(const std::string& tenant, std::span<const int32_t> tokens,
                                     int32_t max_blocks) const;

  int32_t block_size_;
  bool prefix_reuse_;
  std::unordered_map<std::string, KvOwner> by_name_;
  std::unordered_map<uint64_t, KvOwner> by_hash_;
};

}  // namespace seer
