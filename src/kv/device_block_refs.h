#pragma once
// The device tier's block pool and, per block, how many of its references come from
// requests (the rest come from cache owners). From those counts the KV manager
// (kv/kv_manager.h) knows the blocks only cache owners hold (what evicting the whole
// cache would free) and the pinned ones (held by a request and a cache owner:
// evicting them frees nothing). Every device reference is taken, shared and dropped
// here, which keeps both counts in step.
//
// Single-threaded: part of the KvManager.
#include <cstdint>
#include <vector>

#include "kv/block_pool.h"

namespace seer {

class DeviceBlockRefs {
 public:
  explicit DeviceBlockRefs(int32_t num_blocks);

  const BlockPool& pool() const { return pool_; }
  // A free block referenced once by a request (`request`) or a cache owner; -1 when none is free.
  int32_t take(bool request);
  // One more reference to `block`.
  void share(int32_t block, bool request);
  // Drops one reference; true when the block became free.
  bool drop(int32_t block, bool request);
  // A table holding `block` changed owner kind (KvManager::transfer): its request
  // references change by `delta` (+1: a cache owner's became a request's; -1: back).
  void retarget(int32_t block, int32_t delta);
  int32_t request_refs(int32_t block) const { return request_refs_[static_cast<size_t>(block)]; }
  int32_t cache_only_blocks() const { return cache_only_blocks_; }
  int32_t pinned_blocks() const { return pinned_blocks_; }

  // Checks both counts against what the tables hold: `owners[b]` tables name block
  // b, `request_owners[b]` of them requests' (the pool itself: check_block_pool).
  // Throws std::logic_error.
  void check_invariants(const std::vector<int32_t>& owners, const std::vector<int32_t>& request_owners) const;

 private:
  bool cache_only(int32_t block) const;
  bool pinned(int32_t block) const;  // referenced by a request and by a cache owner
  template <typename F>
  void reference(int32_t block, F&& change);

  BlockPool pool_;
  std::vector<int32_t> request_refs_;  // per block: references from requests
  int32_t cache_only_blocks_ = 0;
  int32_t pinned_blocks_ = 0;
};

}  // namespace seer
