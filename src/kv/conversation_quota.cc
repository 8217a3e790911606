#include "kv/conversation_quota.h"

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

ConversationQuota::ConversationQuota(ConversationQuotaConfig config) : config_(config) {
  if (config_.max_entries < 0) fail("--max-conversations must be >= 0 (got {})", config_.max_entries);
  if (config_.max_entries_per_tenant < 0)
    fail("--max-conversations-per-tenant must be >= 0 (got {})", config_.max_entries_per_tenant);
}

void ConversationQuota::added(const std::string& tenant) {
  ++per_tenant_[tenant];
  ++total_;
}

void ConversationQuota::removed(const std::string& tenant) {
  auto it = per_tenant_.find(tenant);
  if (it == per_tenant_.end()) return;
  --total_;
  if (--it->second == 0) per_tenant_.erase(it);
}

int32_t ConversationQuota::entries(const std::string& tenant) const {
  auto it = per_tenant_.find(tenant);
  return it == per_tenant_.end() ? 0 : it->second;
}

std::optional<std::string> ConversationQuota::over_quota(const std::string& tenant) const {
  if (config_.max_entries_per_tenant > 0 && entries(tenant) > config_.max_entries_per_tenant) return tenant;
  if (config_.max_entries <= 0 || total_ <= config_.max_entries) return std::nullopt;
  std::string largest = tenant;  // a tie keeps the tenant who added the entry
  int32_t most = entries(tenant);
  for (const auto& [t, n] : per_tenant_)
    if (n > most || (n == most && largest != tenant && t < largest)) {
      largest = t;
      most = n;
    }
  return largest;
}

void ConversationQuota::evicted(const std::string& conversation) {
  if (config_.max_tombstones == 0 || !tombstones_.insert(conversation).second) return;
  tombstone_order_.push_back(conversation);
  while (tombstones_.size() > config_.max_tombstones || tombstone_order_.size() > 2 * config_.max_tombstones) {
    tombstones_.erase(tombstone_order_.front());
    tombstone_order_.pop_front();
  }
}

bool ConversationQuota::take_tombstone(const std::string& conversation) { return tombstones_.erase(conversation) > 0; }

void ConversationQuota::clear_tombstone(const std::string& conversation) { tombstones_.erase(conversation); }

}  // namespace seer
