#include "kv/conversation_index.h"

#include <algorithm>

namespace seer {

std::optional<KvOwner> ConversationIndex::named(const std::string& conversation) const {
  auto it = by_name_.find(conversation);
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

// A named conversation is found by its name only: a hash match moves the whole entry
// to the request that matched, and a request that merely shares its first blocks (a
// chat template's header, a system prompt) would take the conversation's history
// from its owner.
void ConversationIndex::add(ConversationEntry& e) {
  if (!e.name.empty()) {
    by_name_[e.name] = e.owner;
    return;
  }
  if (!prefix_reuse_ || e.kv_tokens == 0) return;
  e.hashes = block_hashes(e.tenant, e.tokens, e.kv_tokens / block_size_);
  for (uint64_t h : e.hashes) by_hash_[h] = e.owner;
}

void ConversationIndex::remove(const ConversationEntry& e) {
  for (uint64_t h : e.hashes) {
    auto hit = by_hash_.find(h);
    if (hit != by_hash_.end() && hit->second == e.owner) by_hash_.erase(hit);
  }
  if (!e.name.empty()) by_name_.erase(e.name);
}

void ConversationIndex::clear() {
  by_name_.clear();
  by_hash_.clear();
}

std::vector<KvOwner> ConversationIndex::hash_matches(const std::string& tenant, std::span<const int32_t> tokens,
                                                     int32_t max_blocks) const {
  std::vector<KvOwner> owners;
  for (uint64_t h : block_hashes(tenant, tokens, max_blocks)) {
    auto it = by_hash_.find(h);
    if (it != by_hash_.end()) owners.push_back(it->second);
  }
  return owners;
}

std::vector<uint64_t> ConversationIndex::block_hashes(const std::string& tenant, std::span<const int32_t> tokens,
                                                      int32_t max_blocks) const {
  const int32_t b = block_size_;
  const int32_t n = std::min<int32_t>(max_blocks, static_cast<int32_t>(tokens.size()) / b);
  std::vector<uint64_t> out;
  out.reserve(static_cast<size_t>(std::max(n, 0)));
  uint64_t h = 0xcbf29ce484222325ull;  // chained: each block's hash covers the tenant and the whole prefix
  for (unsigned char c : tenant) h = (h ^ c) * 0x100000001b3ull;
  for (int32_t k = 0; k < n; ++k) {
    for (int32_t t = k * b; t < (k + 1) * b; ++t) {
      h ^= static_cast<uint32_t>(tokens[t]);
      h *= 0x100000001b3ull;
      h ^= h >> 29;
    }
    out.push_back(h);
  }
  return out;
}

}  // namespace seer
