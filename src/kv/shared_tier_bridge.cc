// ConversationCache's bridge to the shared tier below the host (kv/shared_tier.h,
// docs/replicas.md): what a stored conversation can add to this cache, and bringing
// it back onto the host tier. (Writing down to it happens where KV leaves the cache:
// release() and the evictor's drops.)
#include <optional>
#include <stdexcept>

#include "kv/conversation_cache.h"
#include "kv/conversation_key.h"

namespace seer {

int32_t ConversationCache::shared_restorable_tokens(const std::string& conversation,
                                                    std::span<const int32_t> prompt) const {
  if (!config_.shared || !config_.keep_kv || !config_.host_tier || conversation.empty() || prompt.size() < 2)
    return 0;
  const int32_t usable = std::min<int32_t>(config_.shared->stored_tokens(conversation, prompt),
                                           static_cast<int32_t>(prompt.size()) - 1);
  const int32_t blocks = usable / kv_.config().block_size;
  const Entry* e = named_entry(conversation);
  if (!e || e->kv_tokens == 0) return blocks * kv_.config().block_size;
  return e->dropped > 0 && blocks >= e->dropped ? e->dropped * kv_.config().block_size : 0;
}

int32_t ConversationCache::restore_from_shared(const std::string& conversation, std::span<const int32_t> prompt,
                                               double now) {
  if (config_.shared) config_.shared->expire(now);
  const int32_t tokens = shared_restorable_tokens(conversation, prompt);
  const int32_t blocks = tokens / kv_.config().block_size;
  auto miss = [&] {
    if (config_.shared && !conversation.empty()) config_.shared->restored(conversation, 0, {}, now);
    return 0;
  };
  if (blocks == 0) return miss();
  const std::optional<KvOwner> local = index_.named(conversation);
  // Every layer group of each block comes back (place_on_host).
  if (!evictor_.ensure_host_room(blocks * kv_.config().groups, now, local)) return miss();  // stored, but no host room to put it
  KvOwner owner;
  if (local && entries_.at(*local).kv_tokens > 0) {  // the dropped leading blocks come back
    owner = *local;
    Entry& e = entries_.at(owner);
    for (int32_t i = 0; i < blocks; ++i)
      if (!kv_.place_on_host(e.owner, i)) throw std::logic_error("kv: shared-tier restore lost its host room");
    e.dropped = 0;
    e.last_active = now;
    evictor_.track(e);
  } else {
    if (local) remove(*local);  // a history without KV
    Entry e;
    e.owner = KvOwner::cache(next_cache_id_--);
    e.name = conversation;
    e.tenant = conversation_key_tenant(conversation);
    std::span<const int32_t> stored = config_.shared->history(conversation);
    e.tokens.assign(stored.begin(), stored.end());
    e.kv_tokens = tokens;
    e.num_blocks = blocks;
    for (int32_t i = 0; i < blocks; ++i)
      if (!kv_.place_on_host(e.owner, i)) throw std::logic_error("kv: shared-tier restore lost its host room");
    e.clean = e.device_only = blocks;  // host only
    e.last_active = now;
    owner = insert(std::move(e)).owner;
  }
  const std::vector<int32_t>& host = kv_.table(owner).host;
  config_.shared->restored(conversation, tokens,
                           std::span(host).first(static_cast<size_t>(blocks) * static_cast<size_t>(kv_.config().groups)),
                           now);
  return tokens;
}

bool ConversationCache::wants_shared(const std::string& conversation) const {
  const Entry* e = named_entry(conversation);
  return !e || e->kv_tokens == 0 || e->dropped > 0;
}

bool ConversationCache::adopt_history(const std::string& conversation, std::span<const int32_t> history,
                                      double now) {
  if (conversation.empty() || history.empty() || index_.named(conversation)) return false;
  Entry e;
  e.owner = KvOwner::cache(next_cache_id_--);
  e.name = conversation;
  e.tenant = conversation_key_tenant(conversation);
  e.tokens.assign(history.begin(), history.end());
  e.last_active = now;
  insert(std::move(e));
  return true;
}

}  // namespace seer
