#include "kv/conversation_cache.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "kv/conversation_key.h"

namespace seer {

EvictionPolicy parse_eviction_policy(const std::string& name) {
  if (name == "pensieve") return EvictionPolicy::Pensieve;
  if (name == "lru") return EvictionPolicy::Lru;
  fail("--eviction: unknown policy '{}' (expected pensieve or lru)", name);
}

const char* eviction_policy_name(EvictionPolicy p) { return p == EvictionPolicy::Lru ? "lru" : "pensieve"; }

CacheCounters& CacheCounters::operator+=(const CacheCounters& o) {
  lookup_tokens += o.lookup_tokens;
  history_tokens += o.history_tokens;
  hit_tokens_device += o.hit_tokens_device;
  hit_tokens_host += o.hit_tokens_host;
  recomputed_tokens += o.recomputed_tokens;
  dropped_tokens += o.dropped_tokens;
  swapped_out_bytes += o.swapped_out_bytes;
  swapped_in_bytes += o.swapped_in_bytes;
  return *this;
}

CacheCounters stateless_cache_counters(int64_t prompt_tokens, int64_t history_tokens) {
  CacheCounters c;
  c.lookup_tokens = prompt_tokens;
  c.history_tokens = history_tokens;
  c.recomputed_tokens = history_tokens;
  return c;
}

ConversationCache::ConversationCache(KvManager& kv, ConversationCacheConfig config)
    : kv_(kv), config_(std::move(config)),
      quota_({config_.max_conversations, config_.max_conversations_per_tenant, config_.max_tombstones}) {
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
  by_name_.clear();
  by_hash_.clear();
  with_kv_.clear();
  clean_blocks_ = 0;
  unsettled_host_.clear();
}

std::span<const int32_t> ConversationCache::history(const std::string& conversation) const {
  auto it = by_name_.find(conversation);
  if (it == by_name_.end()) return {};
  return entries_.at(it->second).tokens;
}

int32_t ConversationCache::chunk_blocks() const {
  return std::max(1, (config_.chunk_tokens + kv_.config().block_size - 1) / kv_.config().block_size);
}

int32_t ConversationCache::tokens_in_block(const Entry& e, int32_t block) const {
  return std::clamp(e.kv_tokens - block * kv_.config().block_size, 0, kv_.config().block_size);
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
    config_.shared->store(conversation, tokens, n, block_refs(id, kv_.config().logical_blocks_for(n)), now);
  }
  if (!conversation.empty()) {
    auto old = by_name_.find(conversation);
    if (old != by_name_.end()) remove(old->second);
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
  index(e);
  quota_.added(e.tenant);
  if (!e.name.empty()) quota_.clear_tombstone(e.name);
  const KvOwner owner = e.owner;
  Entry& placed = entries_.emplace(owner, std::move(e)).first->second;
  track(placed);
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
  auto it = by_name_.find(conversation);
  if (it == by_name_.end()) return config_.shared != nullptr;
  remove(it->second);
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
  clean_blocks_ -= e.device_only - e.clean;
  for (uint64_t h : e.hashes) {
    auto hit = by_hash_.find(h);
    if (hit != by_hash_.end() && hit->second == owner) by_hash_.erase(hit);
  }
  if (!e.name.empty()) by_name_.erase(e.name);
  with_kv_.erase(owner);
  kv_.free(owner);
  entries_.erase(it);
}

void ConversationCache::track(Entry& e) {
  if (e.dropped < e.num_blocks)
    with_kv_[e.owner] = &e;
  else
    with_kv_.erase(e.owner);
}

// ---- Lookup.

std::vector<uint64_t> ConversationCache::block_hashes(const std::string& tenant, std::span<const int32_t> tokens,
                                                     int32_t max_blocks) const {
  const int32_t b = kv_.config().block_size;
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

// A named conversation is found by its name only: a hash match moves the whole entry
// to the request that matched, and a request that merely shares its first blocks (a
// chat template's header, a system prompt) would take the conversation's history
// from its owner.
void ConversationCache::index(Entry& e) {
  if (!e.name.empty()) {
    by_name_[e.name] = e.owner;
    return;
  }
  if (!config_.prefix_reuse || e.kv_tokens == 0) return;
  e.hashes = block_hashes(e.tenant, e.tokens, e.kv_tokens / kv_.config().block_size);
  for (uint64_t h : e.hashes) by_hash_[h] = e.owner;
}

// A request that shared an anonymous entry's blocks ends with a table that starts
// with those very blocks: the older entry adds nothing but a second index.
void ConversationCache::remove_covered_by(const Entry& e) {
  if (!e.name.empty() || !config_.prefix_reuse || e.kv_tokens == 0 || e.dropped > 0) return;
  std::vector<KvOwner> covered;
  for (uint64_t h : block_hashes(e.tenant, e.tokens, e.kv_tokens / kv_.config().block_size)) {
    auto it = by_hash_.find(h);
    if (it == by_hash_.end() || std::find(covered.begin(), covered.end(), it->second) != covered.end()) continue;
    const Entry& o = entries_.at(it->second);
    if (o.name.empty() && o.tenant == e.tenant && o.kv_tokens <= e.kv_tokens &&
        std::equal(o.tokens.begin(), o.tokens.begin() + o.kv_tokens, e.tokens.begin()))
      covered.push_back(o.owner);
  }
  for (KvOwner o : covered) remove(o);
}

ConversationCache::Entry* ConversationCache::find_by_hash(const std::string& tenant, std::span<const int32_t> prompt) {
  const int32_t usable = static_cast<int32_t>(prompt.size()) - 1;
  auto hashes = block_hashes(tenant, prompt, usable / kv_.config().block_size);
  for (size_t k = hashes.size(); k-- > 0;) {
    auto it = by_hash_.find(hashes[k]);
    if (it == by_hash_.end()) continue;
    Entry& e = entries_.at(it->second);
    if (e.tenant == tenant) return &e;  // a hash collision across tenants finds nothing
  }
  return nullptr;
}

std::optional<CacheMatch> ConversationCache::match(const std::string& tenant, const std::string& conversation,
                                                  std::span<const int32_t> prompt) {
  if (!config_.keep_kv || prompt.size() < 2) return std::nullopt;
  Entry* e = nullptr;
  if (!conversation.empty()) {
    auto it = by_name_.find(conversation);
    if (it != by_name_.end() && entries_.at(it->second).tenant == tenant) e = &entries_.at(it->second);
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

double ConversationCache::value(const Entry& e, int32_t block, double now) const {
  if (config_.eviction == EvictionPolicy::Lru) return e.last_active;
  const double idle = std::max(now - e.last_active, 1e-3);
  return config_.chunk_cost(block * kv_.config().block_size) / idle;
}

ConversationCache::Entry* ConversationCache::lowest(Victim kind, double now, std::optional<KvOwner> keep) {
  Entry* best = nullptr;
  double best_value = std::numeric_limits<double>::infinity();
  for (auto& [owner, entry] : with_kv_) {
    if (owner == keep) continue;
    Entry& e = *entry;
    int32_t block = -1;
    switch (kind) {
      case Victim::DeviceChunk: block = e.device_only < e.num_blocks ? e.device_only : -1; break;
      case Victim::CleanChunk: block = e.clean < e.device_only ? e.clean : -1; break;
      case Victim::LeadingChunk: block = e.dropped < e.num_blocks ? e.dropped : -1; break;
    }
    if (block < 0 || kv_.held_by_request(e.owner, block)) continue;  // pinned: evicting it frees nothing
    const double v = value(e, block, now);
    if (!best || v < best_value) {
      best = &e;
      best_value = v;
    }
  }
  return best;
}

bool ConversationCache::swap_out_chunk(Entry& e, std::vector<KvOp>& ops) {
  const int32_t end = std::min(e.device_only + chunk_blocks(), e.num_blocks);
  int32_t copied = 0;
  const size_t first_op = ops.size();
  while (e.device_only < end && !kv_.held_by_request(e.owner, e.device_only) &&
         kv_.copy_block_to_host(e.owner, e.device_only, ops)) {
    ++e.device_only;
    ++copied;
  }
  for (size_t k = first_op; k < ops.size(); ++k) unsettled_host_.insert(ops[k].dst);
  clean_blocks_ += copied;
  counters_.swapped_out_bytes += static_cast<int64_t>(ops.size() - first_op) * kv_.config().bytes_per_block;
  return copied > 0;
}

int32_t ConversationCache::reclaim_chunk(Entry& e, int32_t max_blocks) {
  const int32_t end = std::min({e.clean + chunk_blocks(), e.device_only, e.clean + max_blocks});
  int32_t freed = 0;
  const int32_t start = e.clean;
  for (; e.clean < end && !kv_.held_by_request(e.owner, e.clean); ++e.clean)
    freed += kv_.release_block(e.owner, e.clean, KvTier::Device);
  clean_blocks_ -= e.clean - start;
  return freed;
}

std::vector<KvBlockRef> ConversationCache::block_refs(KvOwner owner, int32_t n) const {
  std::vector<KvBlockRef> refs;
  if (!config_.shared || !config_.shared->needs_block_data()) return refs;
  refs.resize(static_cast<size_t>(std::max(n, 0)));
  const std::vector<int32_t>& device = kv_.table(owner).device;
  const std::vector<int32_t>& host = kv_.table(owner).host;
  for (int32_t i = 0; i < n; ++i) {
    // A device copy is always current; a host copy only once its swap-out ran.
    if (static_cast<size_t>(i) < device.size() && device[static_cast<size_t>(i)] >= 0) {
      refs[static_cast<size_t>(i)] = {KvTier::Device, device[static_cast<size_t>(i)]};
    } else if (static_cast<size_t>(i) < host.size() && host[static_cast<size_t>(i)] >= 0 &&
               !unsettled_host_.count(host[static_cast<size_t>(i)])) {
      refs[static_cast<size_t>(i)] = {KvTier::Host, host[static_cast<size_t>(i)]};
    }
  }
  return refs;
}

int32_t ConversationCache::drop_chunk(Entry& e) {
  const int32_t end = std::min(e.dropped + chunk_blocks(), e.num_blocks);
  // The last local tier lets go: the tier below keeps the chunk (read before release).
  if (config_.shared && !e.name.empty())
    config_.shared->store(e.name, e.tokens, std::min(e.kv_tokens, end * kv_.config().block_size),
                          block_refs(e.owner, end), e.last_active);
  int32_t device_freed = 0;
  for (int32_t i = e.dropped; i < end; ++i) {
    if (i >= e.clean && i < e.device_only) --clean_blocks_;
    device_freed += kv_.release_block(e.owner, i, KvTier::Device);
    kv_.release_block(e.owner, i, KvTier::Host);
    counters_.dropped_tokens += tokens_in_block(e, i);
  }
  e.dropped = end;
  e.clean = std::max(e.clean, end);
  e.device_only = std::max(e.device_only, end);
  track(e);
  return device_freed;
}

bool ConversationCache::ensure_host_room(int32_t blocks, double now, std::optional<KvOwner> keep, double below) {
  while (kv_.usage().host.free < blocks) {
    Entry* e = nullptr;
    double best = std::numeric_limits<double>::infinity();
    for (auto& [owner, entry] : with_kv_) {
      Entry& x = *entry;
      if (owner == keep || x.dropped >= x.device_only) continue;  // no host copy at the leading end
      const double v = value(x, x.dropped, now);
      if (!e || v < best) e = &x, best = v;
    }
    if (!e || !(best < below)) return false;
    drop_chunk(*e);
  }
  return true;
}

void ConversationCache::maintain(double now, std::vector<KvOp>& ops) {
  if (!config_.keep_kv || !config_.host_tier || kv_.usage().host.total == 0) return;
  const auto target = static_cast<int32_t>(config_.swap_out_threshold * kv_.usage().device.total);
  // Clean logical blocks free up to `groups` pool blocks each (fewer where trimmed).
  while (kv_.usage().device.free + clean_blocks_ * kv_.config().groups < target) {
    Entry* e = lowest(Victim::DeviceChunk, now, 0);
    // Ahead of time, a chunk goes down a tier only in place of a lower-value host
    // chunk: a full host tier of dearer chunks ends the swap-out (no churn).
    if (!e || !ensure_host_room(chunk_blocks() * kv_.config().groups, now, 0, value(*e, e->device_only, now)) || !swap_out_chunk(*e, ops))
      return;
  }
}

int32_t ConversationCache::blocks(KvTier t) const {
  if (t == KvTier::Device) return kv_.usage().cache_only;
  int32_t n = 0;
  for (const auto& [owner, e] : entries_) n += kv_.table(owner).num_host;
  return n;
}

int32_t ConversationCache::make_room(int32_t blocks, double now, std::vector<KvOp>& ops, std::optional<KvOwner> keep) {
  int32_t freed = 0;
  const bool host = config_.host_tier && kv_.usage().host.total > 0;
  while (freed < blocks) {
    if (Entry* e = lowest(Victim::CleanChunk, now, keep)) {
      freed += reclaim_chunk(*e, blocks - freed);
      continue;
    }
    Entry* e = lowest(Victim::DeviceChunk, now, keep);
    if (!e) break;
    if (host && ensure_host_room(chunk_blocks() * kv_.config().groups, now, keep) && swap_out_chunk(*e, ops)) continue;
    freed += drop_chunk(*e);
  }
  return freed;
}

// ---- Shared tier.

int32_t ConversationCache::shared_restorable_tokens(const std::string& conversation,
                                                    std::span<const int32_t> prompt) const {
  if (!config_.shared || !config_.keep_kv || !config_.host_tier || conversation.empty() || prompt.size() < 2)
    return 0;
  const int32_t usable = std::min<int32_t>(config_.shared->stored_tokens(conversation, prompt),
                                           static_cast<int32_t>(prompt.size()) - 1);
  const int32_t blocks = usable / kv_.config().block_size;
  auto it = by_name_.find(conversation);
  if (it == by_name_.end() || entries_.at(it->second).kv_tokens == 0) return blocks * kv_.config().block_size;
  const Entry& e = entries_.at(it->second);
  return e.dropped > 0 && blocks >= e.dropped ? e.dropped * kv_.config().block_size : 0;
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
  auto it = by_name_.find(conversation);
  std::optional<KvOwner> local;
  if (it != by_name_.end()) local = it->second;
  // Every layer group of each block comes back (place_on_host).
  if (!ensure_host_room(blocks * kv_.config().groups, now, local)) return miss();  // stored, but no host room to put it
  KvOwner owner;
  if (local && entries_.at(*local).kv_tokens > 0) {  // the dropped leading blocks come back
    owner = *local;
    Entry& e = entries_.at(owner);
    for (int32_t i = 0; i < blocks; ++i)
      if (!kv_.place_on_host(e.owner, i)) throw std::logic_error("kv: shared-tier restore lost its host room");
    e.dropped = 0;
    e.last_active = now;
    track(e);
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
  auto it = by_name_.find(conversation);
  if (it == by_name_.end()) return true;
  const Entry& e = entries_.at(it->second);
  return e.kv_tokens == 0 || e.dropped > 0;
}

bool ConversationCache::adopt_history(const std::string& conversation, std::span<const int32_t> history,
                                      double now) {
  if (conversation.empty() || history.empty() || by_name_.count(conversation)) return false;
  Entry e;
  e.owner = KvOwner::cache(next_cache_id_--);
  e.name = conversation;
  e.tenant = conversation_key_tenant(conversation);
  e.tokens.assign(history.begin(), history.end());
  e.last_active = now;
  insert(std::move(e));
  return true;
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
    auto tracked = with_kv_.find(owner);
    if ((e.dropped < e.num_blocks) != (tracked != with_kv_.end()) || (tracked != with_kv_.end() && tracked->second != &e))
      violated(fmt::format("owner {} with blocks {}..{} is {}tracked as holding KV", owner.id, e.dropped, e.num_blocks,
                           tracked == with_kv_.end() ? "not " : ""));
    if (!e.name.empty() && (by_name_.count(e.name) == 0 || by_name_.at(e.name) != owner))
      violated(fmt::format("conversation '{}' is not indexed", e.name));
    if (!e.name.empty() && conversation_key_tenant(e.name) != e.tenant)
      violated(fmt::format("conversation '{}' is kept for tenant '{}'", e.name, e.tenant));
  }
  if (clean != clean_blocks_) violated(fmt::format("{} clean blocks counted, {} present", clean_blocks_, clean));
  if (tables != kv_.usage().cache_tables)
    violated(fmt::format("the KV manager has {} cache tables, the cache {}", kv_.usage().cache_tables, tables));
  if (by_name_.size() > entries_.size()) violated("stale conversation names");
  if (with_kv_.size() > entries_.size()) violated("stale entries tracked as holding KV");
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
