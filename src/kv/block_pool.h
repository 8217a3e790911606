#pragma once
// One tier's pool of fixed-size KV blocks: a free list and a reference count per
// block. A block is free exactly when its count is 0; counts above 1 mean several
// owners (prefix sharing).
#include <cstdint>
#include <vector>

#include "kv/kv_types.h"

namespace seer {

class BlockPool {
 public:
  BlockPool(KvTier tier, int32_t num_blocks);

  KvTier tier() const { return tier_; }
  int32_t num_blocks() const { return static_cast<int32_t>(ref_.size()); }
  int32_t num_free() const { return static_cast<int32_t>(free_.size()); }
  int32_t num_used() const { return num_blocks() - num_free(); }

  // A free block with count 1, or -1 when none is free. Lowest ids come first from
  // a fresh pool, which keeps plans deterministic and readable in tests.
  int32_t allocate();
  void retain(int32_t block);
  // Drops one reference; returns true when the block became free.
  bool release(int32_t block);
  int32_t ref_count(int32_t block) const { return ref_[block]; }
  const std::vector<int32_t>& free_list() const { return free_; }

 private:
  void check_id(int32_t block, const char* what) const;

  KvTier tier_;
  std::vector<int32_t> ref_;
  std::vector<int32_t> free_;  // stack; back is allocated next
};

}  // namespace seer
