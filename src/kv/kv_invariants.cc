// KvManager::check_invariants: the whole-state audit tests and debug builds run
// after every engine step.
#include <stdexcept>
#include <vector>

#include <fmt/format.h>

#include "kv/kv_invariants.h"
#include "kv/kv_manager.h"

namespace seer {

namespace {

template <typename... Args>
[[noreturn]] void violated(fmt::format_string<Args...> f, Args&&... args) {
  throw std::logic_error("kv invariant violated: " + fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace

void check_block_pool(const BlockPool& pool, const std::vector<int32_t>& owners) {
  if (owners.size() != static_cast<size_t>(pool.num_blocks()))
    violated("{} pool has {} blocks but {} owner counts were given", kv_tier_name(pool.tier()), pool.num_blocks(),
             owners.size());
  const char* tier = kv_tier_name(pool.tier());
  for (int32_t b = 0; b < pool.num_blocks(); ++b)
    if (pool.ref_count(b) != owners[b])
      violated("{} block {} has ref count {} but {} owner(s)", tier, b, pool.ref_count(b), owners[b]);
  std::vector<char> listed(static_cast<size_t>(pool.num_blocks()), 0);
  for (int32_t b : pool.free_list()) {
    if (b < 0 || b >= pool.num_blocks()) violated("{} free list holds invalid block {}", tier, b);
    if (listed[b]) violated("{} block {} is on the free list twice", tier, b);
    listed[b] = 1;
    if (owners[b] != 0) violated("{} block {} is on the free list but has {} owner(s)", tier, b, owners[b]);
  }
  for (int32_t b = 0; b < pool.num_blocks(); ++b)
    if (!listed[b] && owners[b] == 0) violated("{} block {} is neither free nor owned (leaked)", tier, b);
}

void KvManager::check_invariants() const {
  std::vector<int32_t> dev_owners(static_cast<size_t>(device_.pool().num_blocks()), 0);
  std::vector<int32_t> host_owners(static_cast<size_t>(host_.num_blocks()), 0);
  std::vector<int32_t> request_owners(dev_owners.size(), 0);
  // seen[b] == request index + 1 when request already holds b: detects a block
  // appearing twice in one table.
  std::vector<size_t> dev_seen(dev_owners.size(), 0), host_seen(host_owners.size(), 0);
  int64_t unused_sum = 0;
  size_t cache_tables = 0;
  size_t index = 0;
  for (const auto& [owner, t] : tables_) {
    const int64_t id = owner.id;
    ++index;
    if (t.host.size() > t.device.size())
      violated("request {} host table ({} entries) is longer than its logical table ({})", id, t.host.size(),
               t.device.size());
    if (t.groups != config_.groups || t.device.size() % static_cast<size_t>(config_.groups) != 0)
      violated("request {} table has {} entries in {} groups; the layout has {} groups", id, t.device.size(), t.groups,
               config_.groups);
    int32_t n_dev = 0, n_host = 0, n_trimmed = 0;
    for (size_t i = 0; i < t.device.size(); ++i) {
      int32_t d = t.device[i];
      int32_t h = i < t.host.size() ? t.host[i] : -1;
      // Cache owners may keep a clean host copy of a device block (lazy reclaim).
      if (d >= 0 && h >= 0 && owner.is_request()) violated("request {} logical block {} is on both tiers (device {}, host {})", id, i, d, h);
      if (d >= 0) {
        if (d >= device_.pool().num_blocks()) violated("request {} logical block {} names device block {} (pool has {})",
                                                id, i, d, device_.pool().num_blocks());
        if (dev_seen[d] == index) violated("request {} holds device block {} twice", id, d);
        dev_seen[d] = index;
        ++dev_owners[d];
        request_owners[d] += owner.is_request();
        ++n_dev;
      } else if (d == KvTable::kTrimmed) {
        if (!config_.local(static_cast<int32_t>(i) % config_.groups))
          violated("request {} entry {} is trimmed but its group attends everywhere", id, i);
        if (h >= 0) violated("request {} entry {} is trimmed but holds host block {}", id, i, h);
        ++n_trimmed;
      } else if (d < -1) {
        violated("request {} logical block {} has device entry {}", id, i, d);
      }
      if (h >= 0) {
        if (h >= host_.num_blocks())
          violated("request {} logical block {} names host block {} (pool has {})", id, i, h, host_.num_blocks());
        if (host_seen[h] == index) violated("request {} holds host block {} twice", id, h);
        host_seen[h] = index;
        ++host_owners[h];
        ++n_host;
      }
    }
    if (n_dev != t.num_device) violated("request {} counts {} device blocks but holds {}", id, t.num_device, n_dev);
    if (n_host != t.num_host) violated("request {} counts {} host blocks but holds {}", id, t.num_host, n_host);
    if (n_trimmed != t.num_trimmed) violated("request {} counts {} trimmed entries but has {}", id, t.num_trimmed, n_trimmed);
    if (t.reserved < 0) violated("request {} has negative reservation {}", id, t.reserved);
    if (!owner.is_request() && t.reserved != 0)
      violated("cache owner {} holds a reservation of {} blocks", id, t.reserved);
    if (t.request != owner.is_request())
      violated("owner {} has a table marked as {}", id, t.request ? "a request's" : "a cache owner's");
    cache_tables += !owner.is_request();
    unused_sum += t.unused_reservation();
  }
  if (cache_tables != num_cache_tables_)
    violated("{} cache-owner tables exist but {} are counted", cache_tables, num_cache_tables_);
  check_block_pool(device_.pool(), dev_owners);
  device_.check_invariants(dev_owners, request_owners);
  check_block_pool(host_, host_owners);
  if (unused_sum != reserved_unused_)
    violated("reserved-but-unused total is {} but the requests' reservations add up to {}", reserved_unused_,
             unused_sum);
  if (reserved_unused_ > device_.pool().num_free())
    violated("{} device blocks are promised by reservations but only {} are free", reserved_unused_,
             device_.pool().num_free());
}

}  // namespace seer
