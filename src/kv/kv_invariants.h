#pragma once
// Parts of KvManager::check_invariants exposed for direct testing.
#include <vector>

#include "kv/block_pool.h"

namespace seer {

// Ref counts equal `owners` (per block id); the free list holds exactly the blocks
// with no owner, once each. Throws std::logic_error naming the first violation.
void check_block_pool(const BlockPool& pool, const std::vector<int32_t>& owners);

}  // namespace seer
