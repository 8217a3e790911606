#include "kv/shared_kv_tier.h"

#include <algorithm>

#include "common/error.h"

namespace seer {

SharedKvTier::SharedKvTier(int64_t bytes_per_token, int32_t chunk_tokens, SharedTierLimits limits)
    : bytes_per_token_(bytes_per_token), chunk_tokens_(chunk_tokens), limits_(limits) {
  if (bytes_per_token <= 0) fail("shared KV tier: bytes per token must be > 0 (got {})", bytes_per_token);
  if (chunk_tokens <= 0) fail("shared KV tier: chunk tokens must be > 0 (got {})", chunk_tokens);
  if (limits.max_bytes < 0) fail("shared KV tier: the byte cap must be >= 0 (got {})", limits.max_bytes);
  if (!(limits.ttl_s >= 0)) fail("shared KV tier: the TTL must be >= 0 (got {})", limits.ttl_s);
}

void SharedKvTier::remove(std::unordered_map<std::string, Entry>::iterator it) {
  bytes_now_ -= int64_t{it->second.stored} * bytes_per_token_;
  entries_.erase(it);
}

SharedStoreDelta SharedKvTier::record(const std::string& conversation, std::span<const int32_t> tokens,
                                      int32_t kv_tokens, double now) {
  SharedStoreDelta delta;
  if (conversation.empty()) return delta;
  expire_idle(now);
  kv_tokens = std::clamp(kv_tokens, 0, static_cast<int32_t>(tokens.size()));
  Entry& e = entries_[conversation];
  e.last_active = now;
  delta.history_changed = !std::equal(e.tokens.begin(), e.tokens.end(), tokens.begin(), tokens.end());
  if (delta.history_changed) {
    // What is stored stays valid only as far as the new history agrees with it.
    int32_t agree = 0;
    const int32_t limit = std::min<int32_t>(e.stored, static_cast<int32_t>(tokens.size()));
    while (agree < limit && e.tokens[agree] == tokens[agree]) ++agree;
    bytes_now_ -= int64_t{e.stored - agree} * bytes_per_token_;
    e.stored = agree;
    e.tokens.assign(tokens.begin(), tokens.end());
  }
  if (kv_tokens <= e.stored) return delta;  // no new K/V
  // Writes are whole chunks: a partly stored or partly valid chunk is rewritten.
  const int32_t kept = e.stored / chunk_tokens_ * chunk_tokens_;
  counters_.stored_chunks += (kv_tokens - kept + chunk_tokens_ - 1) / chunk_tokens_;
  counters_.stored_bytes += int64_t{kv_tokens - kept} * bytes_per_token_;
  bytes_now_ += int64_t{kv_tokens - e.stored} * bytes_per_token_;
  e.stored = kv_tokens;
  delta.first_token = kept;
  delta.end_token = kv_tokens;
  // Over the cap: the least recently active conversations go first, this one last
  // (when it alone is over the cap, nothing of it is kept).
  while (limits_.max_bytes > 0 && bytes_now_ > limits_.max_bytes) {
    auto oldest = entries_.end();
    for (auto it = entries_.begin(); it != entries_.end(); ++it) {
      if (it->first == conversation) continue;
      if (oldest == entries_.end() || it->second.last_active < oldest->second.last_active) oldest = it;
    }
    if (oldest == entries_.end()) oldest = entries_.find(conversation);
    delta.evicted.emplace_back(oldest->first, static_cast<int32_t>(oldest->second.tokens.size()));
    ++counters_.evicted_conversations;
    const bool self = oldest->first == conversation;
    remove(oldest);
    if (self) {
      delta.first_token = delta.end_token = 0;
      break;
    }
  }
  return delta;
}

std::vector<std::string> SharedKvTier::expire_idle(double now) {
  std::vector<std::string> gone;
  if (limits_.ttl_s <= 0) return gone;
  for (auto it = entries_.begin(); it != entries_.end();) {
    auto next = std::next(it);
    if (now - it->second.last_active > limits_.ttl_s) {
      gone.push_back(it->first);
      ++counters_.expired_conversations;
      remove(it);
    }
    it = next;
  }
  return gone;
}

void SharedKvTier::forget(const std::string& conversation) {
  if (auto it = entries_.find(conversation); it != entries_.end()) remove(it);
}

int32_t SharedKvTier::stored_tokens(const std::string& conversation) const {
  auto it = entries_.find(conversation);
  return it == entries_.end() ? 0 : it->second.stored;
}

int32_t SharedKvTier::stored_tokens(const std::string& conversation, std::span<const int32_t> prompt) const {
  auto it = entries_.find(conversation);
  if (it == entries_.end()) return 0;
  const Entry& e = it->second;
  const int32_t limit = std::min<int32_t>(e.stored, static_cast<int32_t>(prompt.size()));
  int32_t common = 0;
  while (common < limit && e.tokens[common] == prompt[common]) ++common;
  return common;
}

std::span<const int32_t> SharedKvTier::history(const std::string& conversation) const {
  auto it = entries_.find(conversation);
  if (it == entries_.end()) return {};
  return it->second.tokens;
}

void SharedKvTier::restored(const std::string& conversation, int32_t tokens, std::span<const int32_t>, double now) {
  if (auto it = entries_.find(conversation); it != entries_.end() && tokens > 0) it->second.last_active = now;
  note_fetch(tokens);
}

void SharedKvTier::note_fetch(int32_t tokens) {
  if (tokens <= 0) {
    ++counters_.misses;
    return;
  }
  ++counters_.fetches;
  counters_.fetched_tokens += tokens;
  counters_.fetched_bytes += int64_t{tokens} * bytes_per_token_;
}

}  // namespace seer
