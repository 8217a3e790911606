#include "kv/tier_evictor.h"

#include <algorithm>

namespace seer {

int32_t TierEvictor::chunk_blocks() const {
  return std::max(1, (config_.chunk_tokens + kv_.config().block_size - 1) / kv_.config().block_size);
}

int32_t TierEvictor::tokens_in_block(const ConversationEntry& e, int32_t block) const {
  return std::clamp(e.kv_tokens - block * kv_.config().block_size, 0, kv_.config().block_size);
}

void TierEvictor::track(ConversationEntry& e) {
  if (e.dropped < e.num_blocks)
    with_kv_[e.owner] = &e;
  else
    with_kv_.erase(e.owner);
}

void TierEvictor::forget(const ConversationEntry& e) {
  clean_blocks_ -= e.device_only - e.clean;
  with_kv_.erase(e.owner);
}

void TierEvictor::clear() {
  with_kv_.clear();
  clean_blocks_ = 0;
  unsettled_host_.clear();
}

bool TierEvictor::tracks(const ConversationEntry& e) const {
  auto it = with_kv_.find(e.owner);
  return (e.dropped < e.num_blocks) == (it != with_kv_.end()) && (it == with_kv_.end() || it->second == &e);
}

double TierEvictor::value(const ConversationEntry& e, int32_t block, double now) const {
  if (config_.eviction == EvictionPolicy::Lru) return e.last_active;
  const double idle = std::max(now - e.last_active, 1e-3);
  return config_.chunk_cost(block * kv_.config().block_size) / idle;
}

ConversationEntry* TierEvictor::lowest(Victim kind, double now, std::optional<KvOwner> keep) {
  ConversationEntry* best = nullptr;
  double best_value = std::numeric_limits<double>::infinity();
  for (auto& [owner, entry] : with_kv_) {
    if (owner == keep) continue;
    ConversationEntry& e = *entry;
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

bool TierEvictor::swap_out_chunk(ConversationEntry& e, std::vector<KvOp>& ops) {
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

int32_t TierEvictor::reclaim_chunk(ConversationEntry& e, int32_t max_blocks) {
  const int32_t end = std::min({e.clean + chunk_blocks(), e.device_only, e.clean + max_blocks});
  int32_t freed = 0;
  const int32_t start = e.clean;
  for (; e.clean < end && !kv_.held_by_request(e.owner, e.clean); ++e.clean)
    freed += kv_.release_block(e.owner, e.clean, KvTier::Device);
  clean_blocks_ -= e.clean - start;
  return freed;
}

std::vector<KvBlockRef> TierEvictor::block_refs(KvOwner owner, int32_t n) const {
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

int32_t TierEvictor::drop_chunk(ConversationEntry& e) {
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

bool TierEvictor::ensure_host_room(int32_t blocks, double now, std::optional<KvOwner> keep, double below) {
  while (kv_.usage().host.free < blocks) {
    ConversationEntry* e = nullptr;
    double best = std::numeric_limits<double>::infinity();
    for (auto& [owner, entry] : with_kv_) {
      ConversationEntry& x = *entry;
      if (owner == keep || x.dropped >= x.device_only) continue;  // no host copy at the leading end
      const double v = value(x, x.dropped, now);
      if (!e || v < best) e = &x, best = v;
    }
    if (!e || !(best < below)) return false;
    drop_chunk(*e);
  }
  return true;
}

void TierEvictor::maintain(double now, std::vector<KvOp>& ops) {
  if (!config_.keep_kv || !config_.host_tier || kv_.usage().host.total == 0) return;
  const auto target = static_cast<int32_t>(config_.swap_out_threshold * kv_.usage().device.total);
  // Clean logical blocks free up to `groups` pool blocks each (fewer where trimmed).
  while (kv_.usage().device.free + clean_blocks_ * kv_.config().groups < target) {
    ConversationEntry* e = lowest(Victim::DeviceChunk, now, 0);
    // Ahead of time, a chunk goes down a tier only in place of a lower-value host
    // chunk: a full host tier of dearer chunks ends the swap-out (no churn).
    if (!e || !ensure_host_room(chunk_blocks() * kv_.config().groups, now, 0, value(*e, e->device_only, now)) || !swap_out_chunk(*e, ops))
      return;
  }
}

int32_t TierEvictor::make_room(int32_t blocks, double now, std::vector<KvOp>& ops, std::optional<KvOwner> keep) {
  int32_t freed = 0;
  const bool host = config_.host_tier && kv_.usage().host.total > 0;
  while (freed < blocks) {
    if (ConversationEntry* e = lowest(Victim::CleanChunk, now, keep)) {
      freed += reclaim_chunk(*e, blocks - freed);
      continue;
    }
    ConversationEntry* e = lowest(Victim::DeviceChunk, now, keep);
    if (!e) break;
    if (host && ensure_host_room(chunk_blocks() * kv_.config().groups, now, keep) && swap_out_chunk(*e, ops)) continue;
    freed += drop_chunk(*e);
  }
  return freed;
}

}  // namespace seer
