#pragma once
// Who a full conversation cache evicts, and what it remembers of it (issue 53,
// docs/security.md "Quotas"). The cap on kept entries is shared by tenants: one
// tenant's traffic (a flood of stateless requests, each leaving an anonymous prefix
// entry, or of new conversations) evicts its own entries, never another's while it
// holds more than they do. A tenant may also have its own cap.
//
// A named conversation evicted by a cap or its idle TTL leaves a tombstone: the next
// turn naming it is refused (conversation_not_found) instead of continuing silently
// with an empty history. The tombstone goes with that refusal, so the id may then
// start afresh; a DELETE leaves none. Tombstones are bounded (the oldest go first).
//
// Single-threaded, like the cache that owns it.
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>

namespace seer {

struct ConversationQuotaConfig {
  int32_t max_entries = 0;             // all tenants together; 0: no limit
  int32_t max_entries_per_tenant = 0;  // 0: only the shared cap
  size_t max_tombstones = 4096;
};

class ConversationQuota {
 public:
  explicit ConversationQuota(ConversationQuotaConfig config);

  void added(const std::string& tenant);
  void removed(const std::string& tenant);
  int32_t entries(const std::string& tenant) const;

  // The tenant an entry must be evicted from now, or nullopt when every cap holds:
  // `tenant` (who just added one) over its own cap; else, over the shared cap, the
  // tenant holding the most entries (`tenant` on a tie).
  [[nodiscard]] std::optional<std::string> over_quota(const std::string& tenant) const;

  // A named conversation was evicted (not deleted): remember it.
  void evicted(const std::string& conversation);
  // True once when `conversation` was evicted: the tombstone goes.
  [[nodiscard]] bool take_tombstone(const std::string& conversation);
  // Forgets the tombstone (a conversation of this name exists again, or is deleted).
  void clear_tombstone(const std::string& conversation);
  size_t tombstones() const { return tombstones_.size(); }

 private:
  ConversationQuotaConfig config_;
  int32_t total_ = 0;
  std::unordered_map<std::string, int32_t> per_tenant_;
  std::unordered_set<std::string> tombstones_;
  std::deque<std::string> tombstone_order_;  // oldest first; may name cleared ones
};

}  // namespace seer
