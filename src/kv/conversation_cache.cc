#include "kv/conversation_cache.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "kv/conversation_key.h"

namespace seer {

ConversationCache::ConversationCache(KvManager& kv, ConversationCacheConfig config)
    : kv_(kv),
      config_(std::move(config)),
      quota_({config_.max_conversations, config_.max_conversations_per_tenant, config_.max_tombstones}),
      index_(kv.config().block_size, config_.prefix_reuse),
      evictor_(kv, config_, counters_) {
  if (config_.chunk_tokens <= 0) fail("--chunk-tokens must be > 0 (got {})", config_.chunk_tokens);
  if (!(config_.swap_out_threshold >= 0 && config_.swap_out_threshold < 1))
    fail("--swap-out-threshold must be in [0, 1) (got {})", config_.swap_out_threshold);
  if (!(config_.idle_expiry_s >= 0)) fail("--conversation-ttl must be >= 0 (got {})", config_.idle_expiry_s);
  // The codec moves one pool block per logical block.
  if (config_.shared && config_.shared->needs_block_data() && kv_.config().groups > 1)
    fail("a shared KV tier needs one K/V block per position range; this model's sliding-window layers split it into {} "
         "(serve it with --swa-kv full)",
         kv_.config().groups);
  if (!config_.chunk_cost) config_.chunk_cost = [](int32_t l) { return static_cast<double>(l) + 4096.0; };
}

ConversationCache::~ConversationCache() {
  std::vector<KvOwner> owners;
  for (const auto& [owner, e] : entries_) owners.push_back(owner);
  for (KvOwner o : owners) remove(o);
}

void ConversationCache::forget_all() {
  // No tombstones: an engine that recovered serves on as if fresh (docs/serving.md).
  for (const auto& [owner, e] : entries_) quota_.removed(e.tenant);
  entries_.clear();
  index_.clear();
  evictor_.clear();
}

ConversationCache::Entry* ConversationCache::named_entry(const std::string& conversation) {
  std::optional<KvOwner> owner = index_.named(conversation);
  return owner ? &entries_.at(*owner) : nullptr;
}

const ConversationCache::Entry* ConversationCache::named_entry(const std::string& conversation) const {
  std::optional<KvOwner> owner = index_.named(conversation);
  return owner ? &entries_.at(*owner) : nullptr;
}

std::span<const int32_t> ConversationCache::history(const std::string& conversation) const {
  const Entry* e = named_entry(conversation);
  if (!e) return {};
  return e->tokens;
}

// ---- Engine side.

void ConversationCache::release(RequestId id, const std::string& tenant, const std::string& conversation,
                                std::span<const int32_t> tokens, int32_t kv_tokens, int32_t dropped_tokens,
                                double now) {
  const bool keep = config_.keep_kv && (!conversation.empty() || config_.prefix_reuse);
  if (config_.shared && !conversation.empty()) {
    // The history always goes down (another replica can continue the conversation);
    // the K/V with write-through, when it is valid and would be kept.
    const bool with_kv = config_.shared_write_through && dropped_tokens == 0 && config_.keep_kv;
    const int32_t n = with_kv ? std::clamp(kv_tokens, 0, static_cast<int32_t>(tokens.size())) : 0;
    config_.shared->store(conversation, tokens, n, evictor_.block_refs(id, kv_.config().logical_blocks_for(n)), now);
  }
  if (!conversation.empty()) {
    if (std::optional<KvOwner> old = index_.named(conversation)) remove(*old);
  }
  kv_tokens = std::clamp(kv_tokens, 0, static_cast<int32_t>(tokens.size()));
  if (!keep || kv_tokens == 0) {
    kv_.free(id);
    if (conversation.empty()) return;
    kv_tokens = 0;
  }
  Entry e;
  e.owner = KvOwner::cache(next_cache_id_--);
  e.name = conversation;
  e.tenant = tenant;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.last_active = now;
  if (kv_tokens > 0) {
    kv_.truncate(id, kv_tokens);
    kv_.transfer(id, e.owner);
    e.num_blocks = kv_.table(e.owner).logical_blocks();
    const int32_t invalid = std::min(kv_.config().logical_blocks_for(dropped_tokens), e.num_blocks);
    for (int32_t i = 0; i < invalid; ++i) {
      kv_.release_block(e.owner, i, KvTier::Device);
      kv_.release_block(e.owner, i, KvTier::Host);
    }
    // A request's table is device-only, or host-only when it was swapped out.
    const KvTable& table = kv_.table(e.owner);
    int32_t i = 0;
    while (i < e.num_blocks && !table.on_device(i) && !table.on_host(i)) ++i;
    e.dropped = i;
    while (i < e.num_blocks && table.on_host(i) && !table.on_device(i)) ++i;
    e.clean = e.device_only = i;
    while (i < e.num_blocks && table.on_device(i) && !table.on_host(i)) ++i;
    if (i != e.num_blocks) throw std::logic_error(fmt::format("kv: request {} ended with holes in its table", id));
    e.kv_tokens = kv_tokens;
  }
  remove_covered_by(e);
  const KvOwner owner = insert(std::move(e)).owner;
  enforce_quota(tenant, owner);
}

ConversationCache::Entry& ConversationCache::insert(Entry e) {
  index_.add(e);
  quota_.added(e.tenant);
  if (!e.name.empty()) quota_.clear_tombstone(e.name);
  const KvOwner owner = e.owner;
  Entry& placed = entries_.emplace(owner, std::move(e)).first->second;
  evictor_.track(placed);
  return placed;
}

// The tenant over a cap loses an entry: anonymous ones (prefix entries) before named
// conversations, then the least recently active; never `keep` (just released).
void ConversationCache::enforce_quota(const std::string& tenant, KvOwner keep) {
  while (std::optional<std::string> from = quota_.over_quota(tenant)) {
    const Entry* victim = nullptr;
    for (const auto& [owner, e] : entries_) {
      if (owner == keep || e.tenant != *from) continue;
      if (!victim || (e.name.empty() > victim->name.empty()) ||
          (e.name.empty() == victim->name.empty() && e.last_active < victim->last_active))
        victim = &e;
    }
    if (!victim) return;  // only `keep` is left of that tenant
    remove(victim->owner, Removal::Evicted);
  }
}

bool ConversationCache::erase(const std::string& conversation) {
  if (config_.shared) config_.shared->erase(conversation);
  quota_.clear_tombstone(conversation);
  std::optional<KvOwner> owner = index_.named(conversation);
  if (!owner) return config_.shared != nullptr;
  remove(*owner);
  return true;
}

void ConversationCache::expire(double now) {
  if (config_.idle_expiry_s <= 0) return;
  std::vector<KvOwner> old;
  for (const auto& [owner, e] : entries_)
    if (now - e.last_active > config_.idle_expiry_s) old.push_back(owner);
  for (KvOwner o : old) remove(o, Removal::Evicted);
}

void ConversationCache::remove(KvOwner owner, Removal why) {
  auto it = entries_.find(owner);
  if (it == entries_.end()) return;
  Entry& e = it->second;
  quota_.removed(e.tenant);
  // With a shared tier the history outlives this replica's entry.
  if (why == Removal::Evicted && !e.name.empty() && !config_.shared) quota_.evicted(e.name);
  index_.remove(e);
  evictor_.forget(e);
  kv_.free(owner);
  entries_.erase(it);
}

// ---- Lookup.

// A request that shared an anonymous entry's blocks ends with a table that starts
// with those very blocks: the older entry adds nothing but a second index.
void ConversationCache::remove_covered_by(const Entry& e) {
  if (!e.name.empty() || !config_.prefix_reuse || e.kv_tokens == 0 || e.dropped > 0) return;
  std::vector<KvOwner> covered;
  for (KvOwner candidate : index_.hash_matches(e.tenant, e.tokens, e.kv_tokens / kv_.config().block_size)) {
    if (std::find(covered.begin(), covered.end(), candidate) != covered.end()) continue;
    const Entry& o = entries_.at(candidate);
    if (o.name.empty() && o.tenant == e.tenant && o.kv_tokens <= e.kv_tokens &&
        std::equal(o.tokens.begin(), o.tokens.begin() + o.kv_tokens, e.tokens.begin()))
      covered.push_back(o.owner);
  }
  for (KvOwner o : covered) remove(o);
}

ConversationCache::Entry* ConversationCache::find_by_hash(const std::string& tenant, std::span<const int32_t> prompt) {
  const int32_t usable = static_cast<int32_t>(prompt.size()) - 1;
  const std::vector<KvOwner> candidates = index_.hash_matches(tenant, prompt, usable / kv_.config().block_size);
  for (auto it = candidates.rbegin(); it != candidates.rend(); ++it) {  // the longest prefix first
    Entry& e = entries_.at(*it);
    if (e.tenant == tenant) return &e;  // a hash collision across tenants finds nothing
  }
  return nullptr;
}

std::optional<CacheMatch> ConversationCache::match(const std::string& tenant, const std::string& conversation,
                                                  std::span<const int32_t> prompt) {
  if (!config_.keep_kv || prompt.size() < 2) return std::nullopt;
  Entry* e = nullptr;
  if (!conversation.empty()) {
    e = named_entry(conversation);
    if (e && e->tenant != tenant) e = nullptr;
  }
  if ((!e || e->kv_tokens == 0) && config_.prefix_reuse) e = find_by_hash(tenant, prompt);
  if (!e || e->kv_tokens == 0) return std::nullopt;
  // Hashes only find candidates: the tokens decide.
  const int32_t limit = std::min<int32_t>(e->kv_tokens, static_cast<int32_t>(prompt.size()) - 1);
  int32_t common = 0;
  while (common < limit && e->tokens[common] == prompt[common]) ++common;
  // Sliding-window blocks trimmed before the end of a shorter match leave it nothing to continue from.
  if (common == 0 || !kv_.continuable(e->owner, common)) return std::nullopt;
  return CacheMatch{e->owner, common, std::min(e->dropped * kv_.config().block_size, common), !e->name.empty()};
}

void ConversationCache::note_lookup(int32_t prompt_tokens, int32_t history_tokens, int32_t reused_tokens) {
  counters_.lookup_tokens += prompt_tokens;
  counters_.history_tokens += history_tokens;
  counters_.recomputed_tokens += std::max(0, history_tokens - reused_tokens);
}

int32_t ConversationCache::attach_blocks_needed(const CacheMatch& m) const {
  const Entry& e = entries_.at(m.owner);
  if (!m.exclusive) return kv_.share_copies(e.owner, m.tokens);
  return std::min(kv_.config().blocks_for(m.tokens), e.clean * kv_.config().groups);
}

void ConversationCache::count_hits(const Entry& e, int32_t tokens) {
  const int32_t b = kv_.config().block_size;
  for (int32_t i = 0; i < kv_.config().logical_blocks_for(tokens); ++i) {
    const int32_t t = std::min(b, tokens - i * b);
    if (i < e.dropped) continue;  // recomputed: not a hit
    if (i < e.clean) {
      counters_.hit_tokens_host += t;
      counters_.swapped_in_bytes += kv_.config().bytes_per_block * kv_.table(e.owner).held_entries(i);
    } else {
      counters_.hit_tokens_device += t;
    }
  }
}

std::optional<AttachResult> ConversationCache::attach(const CacheMatch& m, RequestId id, std::vector<KvOp>& ops,
                                                      double now) {
  auto it = entries_.find(m.owner);
  if (it == entries_.end()) throw std::logic_error(fmt::format("kv: attach of unknown cache owner {}", m.owner.id));
  if (kv_.has(id)) throw std::logic_error(fmt::format("kv: attach into request {} which holds KV", id));
  if (!m.exclusive && !it->second.name.empty())
    throw std::logic_error(fmt::format("kv: conversation '{}' shared with request {}", it->second.name, id));
  if (attach_blocks_needed(m) > kv_.usage().available()) return std::nullopt;
  Entry& e = it->second;
  count_hits(e, m.tokens);
  const AttachResult r{m.tokens, std::min(e.dropped * kv_.config().block_size, m.tokens), static_cast<int32_t>(e.tokens.size())};
  if (!m.exclusive) {
    if (!kv_.share_prefix(e.owner, id, m.tokens, ops))
      throw std::logic_error(fmt::format("kv: sharing owner {} with request {} failed", e.owner.id, id));
    e.last_active = now;
    return r;
  }
  kv_.truncate(m.owner, m.tokens);
  const KvOwner owner = m.owner;
  kv_.transfer(owner, id);
  e.kv_tokens = 0;  // the KV left with the request; remove() frees nothing more
  remove(owner);
  if (!kv_.make_resident(id, ops)) throw std::logic_error(fmt::format("kv: restoring request {} failed", id));
  return r;
}

// ---- Eviction.

int32_t ConversationCache::blocks(KvTier t) const {
  if (t == KvTier::Device) return kv_.usage().cache_only;
  int32_t n = 0;
  for (const auto& [owner, e] : entries_) n += kv_.table(owner).num_host;
  return n;
}

void ConversationCache::check_invariants() const {
  auto violated = [](const std::string& what) { throw std::logic_error("conversation cache invariant violated: " + what); };
  int32_t clean = 0;
  size_t tables = 0;
  for (const auto& [owner, e] : entries_) {
    if (owner.is_request()) violated(fmt::format("entry with request id {}", owner.id));
    if (!(0 <= e.dropped && e.dropped <= e.clean && e.clean <= e.device_only && e.device_only <= e.num_blocks))
      violated(fmt::format("owner {} cursors {} <= {} <= {} <= {} out of order", owner.id, e.dropped, e.clean,
                           e.device_only, e.num_blocks));
    const KvTable& table = kv_.table(owner);
    if (table.logical_blocks() != e.num_blocks)
      violated(fmt::format("owner {} has {} blocks but the KV table {}", owner.id, e.num_blocks,
                           table.logical_blocks()));
    tables += kv_.has(owner);
    for (int32_t i = 0; i < e.num_blocks; ++i) {
      const bool d = table.on_device(i), h = table.on_host(i);
      const bool want_d = i >= e.clean, want_h = i >= e.dropped && i < e.device_only;
      if (d != want_d || h != want_h)
        violated(fmt::format("owner {} block {} on device {} host {} breaks the leading-end layout", owner.id, i, d, h));
    }
    clean += e.device_only - e.clean;
    if (!evictor_.tracks(e))
      violated(fmt::format("owner {} with blocks {}..{} is {}tracked as holding KV", owner.id, e.dropped, e.num_blocks,
                           e.dropped < e.num_blocks ? "not " : ""));
    if (!e.name.empty() && index_.named(e.name) != owner)
      violated(fmt::format("conversation '{}' is not indexed", e.name));
    if (!e.name.empty() && conversation_key_tenant(e.name) != e.tenant)
      violated(fmt::format("conversation '{}' is kept for tenant '{}'", e.name, e.tenant));
  }
  if (clean != evictor_.clean_blocks())
    violated(fmt::format("{} clean blocks counted, {} present", evictor_.clean_blocks(), clean));
  if (tables != kv_.usage().cache_tables)
    violated(fmt::format("the KV manager has {} cache tables, the cache {}", kv_.usage().cache_tables, tables));
  if (index_.num_named() > entries_.size()) violated("stale conversation names");
  if (evictor_.num_tracked() > entries_.size()) violated("stale entries tracked as holding KV");
  std::unordered_map<std::string, int32_t> per_tenant;
  for (const auto& [owner, e] : entries_) ++per_tenant[e.tenant];
  for (const auto& [tenant, n] : per_tenant)
    if (quota_.entries(tenant) != n)
      violated(fmt::format("tenant '{}' holds {} entries, the quota counts {}", tenant, n, quota_.entries(tenant)));
  if (config_.max_conversations_per_tenant > 0)
    for (const auto& [tenant, n] : per_tenant)
      if (n > config_.max_conversations_per_tenant)
        violated(fmt::format("tenant '{}' holds {} entries over its cap of {}", tenant, n,
                             config_.max_conversations_per_tenant));
}

}  // namespace seer
