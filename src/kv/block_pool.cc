#include "kv/block_pool.h"

#include <stdexcept>

#include <fmt/format.h>

namespace seer {

const char* kv_tier_name(KvTier t) { return t == KvTier::Device ? "device" : "host"; }

BlockPool::BlockPool(KvTier tier, int32_t num_blocks) : tier_(tier), ref_(static_cast<size_t>(num_blocks), 0) {
  free_.reserve(static_cast<size_t>(num_blocks));
  for (int32_t b = num_blocks - 1; b >= 0; --b) free_.push_back(b);
}

void BlockPool::check_id(int32_t block, const char* what) const {
  if (block < 0 || block >= num_blocks())
    throw std::logic_error(fmt::format("{} of {} block {}: no such block (pool has {})", what, kv_tier_name(tier_),
                                       block, num_blocks()));
}

int32_t BlockPool::allocate() {
  if (free_.empty()) return -1;
  int32_t b = free_.back();
  free_.pop_back();
  ref_[b] = 1;
  return b;
}

void BlockPool::retain(int32_t block) {
  check_id(block, "retain");
  if (ref_[block] == 0)
    throw std::logic_error(fmt::format("retain of free {} block {}", kv_tier_name(tier_), block));
  ++ref_[block];
}

bool BlockPool::release(int32_t block) {
  check_id(block, "release");
  if (ref_[block] == 0)
    throw std::logic_error(fmt::format("release of free {} block {} (double free)", kv_tier_name(tier_), block));
  if (--ref_[block] > 0) return false;
  free_.push_back(block);
  return true;
}

}  // namespace seer
