#include "scheduler/conversations.h"

#include <algorithm>

#include <fmt/format.h>

#include "common/error.h"
#include "kv/conversation_key.h"
#include "scheduler/scheduler.h"

namespace seer {

std::unique_ptr<ConversationCache> make_conversation_cache(const PolicyInfo& policy, KvManager& kv,
                                                           ConversationCacheSetup setup) {
  const bool keep_kv = policy.caches_conversations || setup.prefix_reuse;
  if (!keep_kv && !setup.histories_when_stateless) return nullptr;
  ConversationCacheConfig c;
  c.keep_kv = keep_kv;
  c.host_tier = policy.cache_host_tier;
  c.prefix_reuse = setup.prefix_reuse;
  c.chunk_tokens = setup.chunk_tokens;
  c.swap_out_threshold = setup.swap_out_threshold;
  c.eviction = parse_eviction_policy(setup.eviction);
  c.chunk_cost = std::move(setup.chunk_cost);
  c.max_conversations = setup.max_conversations;
  c.max_conversations_per_tenant = setup.max_conversations_per_tenant;
  c.idle_expiry_s = setup.idle_expiry_s;
  c.shared = setup.shared;
  c.shared_write_through = setup.shared && setup.shared_write_through;
  return std::make_unique<ConversationCache>(kv, std::move(c));
}

std::vector<int32_t> prompt_after_history(std::span<const int32_t> history, const Request& r) {
  const auto skip = static_cast<size_t>(std::clamp<int32_t>(r.fresh_start_tokens, 0, r.prompt_len()));
  std::vector<int32_t> prompt(history.begin(), history.end());
  prompt.insert(prompt.end(), r.prompt_tokens.begin() + static_cast<std::ptrdiff_t>(skip), r.prompt_tokens.end());
  return prompt;
}

void Conversations::arrive(Request& r, double now) {
  expire(now);
  r.conversation_history_len = std::clamp(r.conversation_history_len, 0, r.prompt_len());
  if (!r.continues_conversation || !cache_ || r.conversation.empty()) return;
  std::span<const int32_t> history = cache_->history(r.conversation);
  if (history.empty() && cache_->take_evicted(r.conversation))
    fail_with_code("conversation_not_found",
                   "conversation '{}' is no longer held (evicted by the conversation cap or its idle TTL); "
                   "send the whole history to start it again",
                   conversation_key_id(r.conversation));
  if (history.empty()) return;  // unknown: a new conversation
  r.prompt_tokens = prompt_after_history(history, r);
  r.conversation_history_len = static_cast<int32_t>(history.size());
}

bool Conversations::wants_shared(const std::string& conversation, double now) {
  if (!cache_ || !cache_->config().shared || conversation.empty()) return false;
  expire(now);  // an expired local entry does not hide the shared tier's
  return cache_->wants_shared(conversation);
}

namespace {
// The prompt `r` will have once arrive() prepends a history: the cache's, else the
// shared tier's.
std::vector<int32_t> prompt_to_restore(const ConversationCache& cache, const Request& r,
                                       std::span<const int32_t> stored_history) {
  if (!r.continues_conversation) return r.prompt_tokens;
  std::span<const int32_t> history = cache.contains(r.conversation) ? cache.history(r.conversation) : stored_history;
  return history.empty() ? r.prompt_tokens : prompt_after_history(history, r);
}
}  // namespace

int32_t Conversations::shared_restorable(const Request& r) const {
  if (!cache_ || !cache_->config().shared || r.conversation.empty()) return 0;
  return cache_->shared_restorable_tokens(r.conversation, prompt_to_restore(*cache_, r, {}));
}

int32_t Conversations::restore_shared(const Request& r, std::span<const int32_t> stored_history, double now) {
  if (!cache_ || !cache_->config().shared || r.conversation.empty()) return 0;
  const int32_t restored = cache_->restore_from_shared(r.conversation, prompt_to_restore(*cache_, r, stored_history), now);
  if (restored == 0 && r.continues_conversation) (void)cache_->adopt_history(r.conversation, stored_history, now);
  return restored;
}

void Conversations::release(const Request& r, KvManager& kv, double now) {
  if (!cache_ || r.conversation_deleted) {
    kv.free(r.id);
    return;
  }
  const bool completed = r.finish_reason == FinishReason::Stop || r.finish_reason == FinishReason::Length;
  std::vector<int32_t> tokens;
  if (completed) {
    tokens = r.prompt_tokens;
    tokens.insert(tokens.end(), r.output_tokens.begin(), r.output_tokens.end());
  } else {
    // An aborted turn that never took its conversation's entry leaves it be.
    if (!r.conversation.empty() && cache_->contains(r.conversation)) {
      kv.free(r.id);
      return;
    }
    const int32_t keep = r.conversation.empty() ? r.prompt_len() : r.conversation_history_len;
    tokens.assign(r.prompt_tokens.begin(), r.prompt_tokens.begin() + keep);
  }
  const int32_t kv_tokens = std::min<int32_t>(r.num_computed_tokens, static_cast<int32_t>(tokens.size()));
  cache_->release(r.id, r.tenant, r.conversation, tokens, kv_tokens, r.num_dropped_leading, now);
}

bool Conversations::forget(const std::string& conversation, double now) {
  if (!cache_ || conversation.empty()) return false;
  expire(now);
  return cache_->erase(conversation);
}

void Conversations::expire(double now) {
  if (cache_) cache_->expire(now);
}

void Conversations::plan_executed() {
  if (cache_) cache_->plan_executed();
}

void Conversations::forget_all() {
  if (cache_) cache_->forget_all();
}

void Conversations::check_invariants() const {
  if (cache_) cache_->check_invariants();
}

std::string Conversations::describe() const {
  if (!cache_) return "";
  return fmt::format("cache: {} conversations, {} device and {} host blocks", cache_->num_conversations(),
                     cache_->blocks(KvTier::Device), cache_->blocks(KvTier::Host));
}

}  // namespace seer
