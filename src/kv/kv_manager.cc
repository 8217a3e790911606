#include "kv/kv_manager.h"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"

namespace seer {

void KvManager::reset() {
  const KvConfig config = config_;
  *this = KvManager(config);
}

namespace {
const KvTable kEmptyTable;
}

KvManager::KvManager(const KvConfig& config)
    : config_(config),
      device_(std::max(config.device_blocks, 0)),
      host_(KvTier::Host, std::max(config.host_blocks, 0)) {
  if (config.block_size <= 0) fail("kv: block_size must be > 0 (got {})", config.block_size);
  if (config.device_blocks <= 0) fail("kv: device_blocks must be > 0 (got {})", config.device_blocks);
  if (config.host_blocks < 0) fail("kv: host_blocks must be >= 0 (got {})", config.host_blocks);
  if (config.bytes_per_block < 0) fail("kv: bytes_per_block must be >= 0 (got {})", config.bytes_per_block);
  // At least one group attends everywhere: a logical block is never wholly trimmed.
  if (config.groups < 1 || config.local_groups < 0 || config.local_groups >= config.groups)
    fail("kv: {} layer groups with {} sliding-window ones (need >= 1, and one that attends everywhere)", config.groups,
         config.local_groups);
  if ((config.local_groups > 0) != (config.window > 0))
    fail("kv: {} sliding-window groups with a window of {}", config.local_groups, config.window);
}

KvUsage KvManager::usage() const {
  return KvUsage{.device = {device_.pool().num_blocks(), device_.pool().num_free()},
                 .host = {host_.num_blocks(), host_.num_free()},
                 .reserved_unused = reserved_unused_,
                 .cache_only = device_.cache_only_blocks(),
                 .request_tables = tables_.size() - num_cache_tables_,
                 .cache_tables = num_cache_tables_};
}

bool KvManager::needs_device(const Table& t, int32_t e) {
  const int32_t d = t.device[static_cast<size_t>(e)];
  return d == -1 || (d == KvTable::kTrimmed && t.recomputed(e / t.groups));
}

const KvManager::Table* KvManager::find(KvOwner owner) const {
  auto it = tables_.find(owner);
  return it == tables_.end() ? nullptr : &it->second;
}

KvManager::Table& KvManager::table_of(KvOwner owner) {
  auto [it, inserted] = tables_.try_emplace(owner);
  if (inserted) {
    it->second.request = owner.is_request();
    it->second.groups = config_.groups;
    if (!it->second.request) ++num_cache_tables_;
  }
  return it->second;
}

bool KvManager::release_device(Table& t, int32_t block) {
  // A block still shared with others frees nothing, so the request's promise must
  // not grow by it either: keep its reserved-but-unused count unchanged.
  const bool freed = device_.drop(block, t.request);
  if (!freed && t.reserved >= t.num_device) --t.reserved;
  --t.num_device;
  return freed;
}

const KvTable& KvManager::table(KvOwner owner) const {
  const Table* t = find(owner);
  return t ? *t : kEmptyTable;
}

int32_t KvManager::from_available(const Table& t, int32_t n) const {
  return std::max(0, n - t.unused_reservation());
}

bool KvManager::can_reserve(KvOwner owner, int32_t blocks) const {
  if (blocks < 0) throw std::logic_error(fmt::format("kv: reservation of {} blocks for request {}", blocks, owner.id));
  const Table* t = find(owner);
  int32_t held = t ? t->num_device : 0;
  int32_t unused_now = t ? t->unused_reservation() : 0;
  int32_t unused_after = std::max(0, blocks - held);
  return unused_after - unused_now <= available();
}

bool KvManager::reserve(KvOwner owner, int32_t blocks) {
  if (!can_reserve(owner, blocks)) return false;
  update(table_of(owner), [&](Table& t) { t.reserved = blocks; });
  return true;
}

int32_t KvManager::blocks_for(KvOwner owner, int32_t num_tokens) const {
  const Table* t = find(owner);
  return std::max(0, config_.blocks_for(num_tokens) - (t ? t->num_trimmed : 0));
}

int32_t KvManager::tokens_for(KvOwner owner, int32_t blocks) const {
  const Table* t = find(owner);
  return config_.tokens_for(blocks + (t ? t->num_trimmed : 0));
}

int32_t KvManager::blocks_needed(KvOwner owner, int32_t num_tokens) const {
  const Table* t = find(owner);
  int32_t have = t ? static_cast<int32_t>(t->device.size()) : 0;
  int32_t extra = std::max(0, config_.blocks_for(num_tokens) - have);
  return t ? from_available(*t, extra) : extra;
}

bool KvManager::allocate(KvOwner owner, int32_t num_tokens) {
  // One hash lookup: this runs for every scheduled request every iteration.
  const int32_t need = config_.blocks_for(num_tokens);
  auto it = tables_.find(owner);
  const int32_t have = it == tables_.end() ? 0 : static_cast<int32_t>(it->second.device.size());
  if (have >= need) return true;
  const int32_t from_pool = it == tables_.end() ? need : from_available(it->second, need - have);
  if (from_pool > available()) return false;
  if (it == tables_.end()) {
    it = tables_.emplace(owner, Table{.device = {}, .host = {}, .groups = config_.groups, .request = owner.is_request()}).first;
    if (!it->second.request) ++num_cache_tables_;
  }
  update(it->second, [&](Table& t) {
    while (static_cast<int32_t>(t.device.size()) < need) {
      int32_t b = device_.take(t.request);
      if (b < 0) throw std::logic_error(fmt::format("kv: device pool empty while allocating for request {}", owner.id));
      t.device.push_back(b);
      ++t.num_device;
    }
  });
  return true;
}

void KvManager::truncate(KvOwner owner, int32_t num_tokens) {
  auto it = tables_.find(owner);
  if (it == tables_.end()) return;
  size_t keep = static_cast<size_t>(config_.blocks_for(num_tokens));
  update(it->second, [&](Table& t) {
    while (t.device.size() > keep) {
      size_t i = t.device.size() - 1;
      if (t.device[i] >= 0) release_device(t, t.device[i]);
      t.num_trimmed -= t.device[i] == KvTable::kTrimmed;
      if (i < t.host.size() && t.host[i] >= 0) {
        host_.release(t.host[i]);
        --t.num_host;
      }
      t.device.pop_back();
    }
    if (t.host.size() > keep) t.host.resize(keep);
    t.trimmed_below = std::min(t.trimmed_below, t.logical_blocks());
  });
}

void KvManager::free(KvOwner owner) {
  auto it = tables_.find(owner);
  if (it == tables_.end()) return;
  Table& t = it->second;
  for (int32_t b : t.device)
    if (b >= 0) device_.drop(b, t.request);
  for (int32_t b : t.host)
    if (b >= 0) host_.release(b);
  reserved_unused_ -= t.unused_reservation();
  if (!owner.is_request()) --num_cache_tables_;
  tables_.erase(it);
}

bool KvManager::can_swap_out(KvOwner owner) const {
  const Table* t = find(owner);
  return !t || t->num_device <= host_.num_free();
}

bool KvManager::swap_out(KvOwner owner, std::vector<KvOp>& ops) {
  if (!can_swap_out(owner)) return false;
  auto it = tables_.find(owner);
  if (it == tables_.end()) return true;
  update(it->second, [&](Table& t) {
    if (t.host.size() < t.device.size()) t.host.resize(t.device.size(), -1);
    for (size_t i = 0; i < t.device.size(); ++i) {
      if (t.device[i] < 0) continue;
      if (t.host[i] >= 0)
        throw std::logic_error(fmt::format("kv: request {} logical block {} on both tiers", owner.id, i));
      int32_t h = host_.allocate();
      ops.push_back(KvOp{KvOpKind::SwapOut, t.device[i], h});
      device_.drop(t.device[i], t.request);
      t.device[i] = -1;
      t.host[i] = h;
      --t.num_device;
      ++t.num_host;
    }
    t.reserved = 0;
  });
  return true;
}

bool KvManager::can_swap_in(KvOwner owner) const {
  const Table* t = find(owner);
  return (t ? from_available(*t, t->num_host) : 0) <= available();
}

bool KvManager::swap_in(KvOwner owner, std::vector<KvOp>& ops) {
  if (!can_swap_in(owner)) return false;
  auto it = tables_.find(owner);
  if (it == tables_.end()) return true;
  update(it->second, [&](Table& t) {
    for (size_t i = 0; i < t.host.size(); ++i) {
      if (t.host[i] < 0) continue;
      int32_t d = device_.take(t.request);
      if (d < 0) throw std::logic_error(fmt::format("kv: device pool empty while swapping in request {}", owner.id));
      ops.push_back(KvOp{KvOpKind::SwapIn, t.host[i], d});
      host_.release(t.host[i]);
      t.host[i] = -1;
      t.device[i] = d;
      --t.num_host;
      ++t.num_device;
    }
    t.host.clear();
  });
  return true;
}

bool KvManager::share_prefix(KvOwner src, KvOwner dst, int32_t num_tokens, std::vector<KvOp>& ops) {
  if (src == dst || num_tokens < 0) throw std::logic_error(fmt::format("kv: share_prefix of {} tokens of {} into {}", num_tokens, src.id, dst.id));
  if (has(dst)) throw std::logic_error(fmt::format("kv: share_prefix into owner {} which holds blocks", dst.id));
  const Table& s = table(src);
  if (share_copies(src, num_tokens) > available()) return false;
  const int32_t n = config_.logical_blocks_for(num_tokens);
  const int32_t full = num_tokens / config_.block_size;
  Table& d = table_of(dst);
  update(d, [&](Table& t) {
    for (int32_t e = 0; e < n * config_.groups; ++e) {
      const int32_t i = e / config_.groups;
      if (e < s.entries() && s.trimmed(e) && !s.recomputed(i)) {
        t.device.push_back(KvTable::kTrimmed);
        ++t.num_trimmed;
        continue;
      }
      const int32_t from_device = s.entry_on_device(e) ? s.device[static_cast<size_t>(e)] : -1;
      if (i < full && from_device >= 0) {
        device_.share(from_device, t.request);
        t.device.push_back(from_device);
      } else {
        // Copy-on-write ahead of time: dst will write the rest of a partial block.
        // Blocks src holds only on the host are copied up; blocks it lacks are
        // fresh, to be recomputed.
        const int32_t b = device_.take(t.request);
        if (b < 0) throw std::logic_error(fmt::format("kv: device pool empty while sharing into owner {}", dst.id));
        if (from_device >= 0)
          ops.push_back(KvOp{KvOpKind::Copy, from_device, b});
        else if (s.entry_on_host(e))
          ops.push_back(KvOp{KvOpKind::SwapIn, s.host[static_cast<size_t>(e)], b});
        t.device.push_back(b);
      }
      ++t.num_device;
    }
  });
  return true;
}

int32_t KvManager::share_copies(KvOwner src, int32_t num_tokens) const {
  const Table& s = table(src);
  const int32_t full = num_tokens / config_.block_size;
  int32_t copies = 0;
  for (int32_t e = 0; e < config_.blocks_for(num_tokens); ++e) {
    const int32_t i = e / config_.groups;
    if (e < s.entries() && s.trimmed(e) && !s.recomputed(i)) continue;
    copies += !(i < full && s.entry_on_device(e));
  }
  return copies;
}

void KvManager::transfer(KvOwner from, KvOwner to) {
  auto it = tables_.find(from);
  if (it == tables_.end() || from == to) return;
  if (has(to)) throw std::logic_error(fmt::format("kv: transfer of owner {} into owner {} which holds blocks", from.id, to.id));
  update(it->second, [](Table& t) { t.reserved = 0; });
  Table moved = std::move(it->second);
  if (!moved.request) --num_cache_tables_;
  tables_.erase(it);
  const int32_t delta = static_cast<int32_t>(to.is_request()) - static_cast<int32_t>(moved.request);
  for (int32_t b : moved.device)
    if (b >= 0 && delta != 0) device_.retarget(b, delta);
  moved.request = to.is_request();
  table_of(to) = std::move(moved);
}

bool KvManager::copy_block_to_host(KvOwner owner, int32_t i, std::vector<KvOp>& ops) {
  if (owner.is_request()) throw std::logic_error(fmt::format("kv: clean host copy for request {}", owner.id));
  const Table& held = table(owner);
  if (!held.on_device(i)) return false;
  std::vector<int32_t> copy;
  for (int32_t e = i * held.groups; e < (i + 1) * held.groups; ++e)
    if (held.entry_on_device(e) && !held.entry_on_host(e)) copy.push_back(e);
  if (copy.empty() || host_.num_free() < static_cast<int32_t>(copy.size())) return false;
  Table& t = tables_.at(owner);
  if (t.host.size() < t.device.size()) t.host.resize(t.device.size(), -1);
  for (int32_t e : copy) {
    const int32_t h = host_.allocate();
    ops.push_back(KvOp{KvOpKind::SwapOut, t.device[static_cast<size_t>(e)], h});
    t.host[static_cast<size_t>(e)] = h;
    ++t.num_host;
  }
  return true;
}

bool KvManager::place_on_host(KvOwner owner, int32_t i) {
  if (owner.is_request()) throw std::logic_error(fmt::format("kv: shared-tier block for request {}", owner.id));
  const Table& held = table(owner);
  const int32_t length = held.logical_blocks();
  if (i < 0 || i > length) throw std::logic_error(fmt::format("kv: owner {} has no logical block {}", owner.id, i));
  for (int32_t e = i * config_.groups; i < length && e < (i + 1) * config_.groups; ++e)
    if (held.entry_on_device(e) || held.entry_on_host(e)) return false;
  if (host_.num_free() < config_.groups) return false;
  Table& t = table_of(owner);
  if (i == length) t.device.resize(t.device.size() + static_cast<size_t>(config_.groups), -1);
  if (t.host.size() < t.device.size()) t.host.resize(t.device.size(), -1);
  for (int32_t e = i * config_.groups; e < (i + 1) * config_.groups; ++e) {
    if (t.device[static_cast<size_t>(e)] == KvTable::kTrimmed) {  // the data arrives whole
      t.device[static_cast<size_t>(e)] = -1;
      --t.num_trimmed;
    }
    t.host[static_cast<size_t>(e)] = host_.allocate();
    ++t.num_host;
  }
  return true;
}

int32_t KvManager::release_block(KvOwner owner, int32_t i, KvTier tier) {
  auto it = tables_.find(owner);
  if (it == tables_.end() || i < 0 || i >= it->second.logical_blocks()) return 0;
  int32_t freed = 0;
  update(it->second, [&](Table& t) {
    for (int32_t e = i * t.groups; e < (i + 1) * t.groups; ++e) {
      const auto k = static_cast<size_t>(e);
      if (tier == KvTier::Device && t.entry_on_device(e)) {
        freed += release_device(t, t.device[k]);
        t.device[k] = -1;
      } else if (tier == KvTier::Host && t.entry_on_host(e)) {
        freed += host_.release(t.host[k]);
        t.host[k] = -1;
        --t.num_host;
      }
    }
  });
  return freed;
}

bool KvManager::held_by_request(KvOwner owner, int32_t i) const {
  if (device_.pinned_blocks() == 0) return false;  // nothing shared between a request and a cache owner
  const Table& t = table(owner);
  if (!t.on_device(i)) return false;
  for (int32_t e = i * t.groups; e < (i + 1) * t.groups; ++e)
    if (t.entry_on_device(e) && device_.request_refs(t.device[static_cast<size_t>(e)]) > 0) return true;
  return false;
}

int32_t KvManager::blocks_to_make_resident(KvOwner owner) const {
  const Table* t = find(owner);
  if (!t) return 0;
  int32_t missing = 0;
  for (int32_t e = 0; e < t->entries(); ++e) missing += needs_device(*t, e);
  return from_available(*t, missing);
}

bool KvManager::make_resident(KvOwner owner, std::vector<KvOp>& ops) {
  if (blocks_to_make_resident(owner) > available()) return false;
  auto it = tables_.find(owner);
  if (it == tables_.end()) return true;
  update(it->second, [&](Table& t) {
    // Decided per logical block before any of its entries changes.
    std::vector<char> need(t.device.size());
    for (int32_t e = 0; e < t.entries(); ++e) need[static_cast<size_t>(e)] = needs_device(t, e);
    for (size_t i = 0; i < t.device.size(); ++i) {
      const int32_t h = i < t.host.size() ? t.host[i] : -1;
      if (need[i]) {
        int32_t d = device_.take(t.request);
        if (d < 0) throw std::logic_error(fmt::format("kv: device pool empty while restoring owner {}", owner.id));
        if (h >= 0) ops.push_back(KvOp{KvOpKind::SwapIn, h, d});
        if (t.device[i] == KvTable::kTrimmed) {  // recomputed with its block: trim() finds it again
          --t.num_trimmed;
          t.trimmed_below = 0;
        }
        t.device[i] = d;
        ++t.num_device;
      }
      if (h >= 0) {
        host_.release(h);
        --t.num_host;
      }
    }
    t.host.clear();
  });
  return true;
}

}  // namespace seer
