#include "kv/shared_kv_tier.h"

#include <algorithm>

#include "common/error.h"

namespace seer {

SharedKvTier::SharedKvTier(int64_t bytes_per_token, int32_t chunk_tokens)
    : bytes_per_token_(bytes_per_token), chunk_tokens_(chunk_tokens) {
  if (bytes_per_token <= 0) fail("shared KV tier: bytes per token must be > 0 (got {})", bytes_per_token);
  if (chunk_tokens <= 0) fail("shared KV tier: chunk tokens must be > 0 (got {})", chunk_tokens);
}

void SharedKvTier::store(const std::string& conversation, std::span<const int32_t> tokens, int32_t kv_tokens) {
  if (conversation.empty()) return;
  kv_tokens = std::clamp(kv_tokens, 0, static_cast<int32_t>(tokens.size()));
  Entry& e = entries_[conversation];
  // What is stored stays valid only as far as the new history agrees with it.
  int32_t agree = 0;
  const int32_t limit = std::min<int32_t>(e.stored, kv_tokens);
  while (agree < limit && e.tokens[agree] == tokens[agree]) ++agree;
  const bool disagrees = agree < limit;
  if (!disagrees && kv_tokens <= e.stored) return;  // nothing new
  // Writes are whole chunks: a partly stored or partly valid chunk is rewritten.
  const int32_t kept = (disagrees ? agree : e.stored) / chunk_tokens_ * chunk_tokens_;
  counters_.stored_chunks += (kv_tokens - kept + chunk_tokens_ - 1) / chunk_tokens_;
  counters_.stored_bytes += int64_t{kv_tokens - kept} * bytes_per_token_;
  e.stored = kv_tokens;
  e.tokens.assign(tokens.begin(), tokens.end());
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
