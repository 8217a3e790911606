#pragma once
// The KV manager's sizes (KvConfig) and its pools' counts at one moment (KvUsage):
// what readers of the paged KV cache (kv/kv_manager.h) size and watch it by.
#include <algorithm>
#include <cstddef>
#include <cstdint>

#include "kv/kv_types.h"

namespace seer {

struct KvConfig {
  int32_t block_size = 16;      // tokens per logical block
  int32_t device_blocks = 0;    // must be > 0
  int32_t host_blocks = 0;      // 0: no host tier (swap preemption impossible)
  int64_t bytes_per_block = 0;  // K+V bytes of one pool block (one group's layers; swap accounting)
  // Layer groups (kv/kv_layer_groups.h): pool blocks per logical block. The last
  // `local_groups` hold sliding-window layers that attend to `window` positions.
  int32_t groups = 1;
  int32_t local_groups = 0;
  int32_t window = 0;

  // Logical blocks that hold `tokens` tokens.
  int32_t logical_blocks_for(int32_t tokens) const { return (tokens + block_size - 1) / block_size; }
  // Pool blocks that hold `tokens` tokens, none trimmed.
  int32_t blocks_for(int32_t tokens) const { return groups * logical_blocks_for(tokens); }
  // Tokens whose logical blocks `blocks` fresh pool blocks hold.
  int32_t tokens_for(int32_t blocks) const { return blocks / groups * block_size; }
  bool local(int32_t group) const { return group >= groups - local_groups; }
  // The first logical block a sliding-window layer still attends to once `tokens`
  // tokens are computed (the next query is at position `tokens`).
  int32_t first_attended_block(int32_t tokens) const {
    return local_groups == 0 ? 0 : std::max(0, tokens - window + 1) / block_size;
  }
};

// The pools' counts at one moment.
struct KvUsage {
  struct Tier {
    int32_t total = 0;
    int32_t free = 0;
    int32_t used() const { return total - free; }
  };
  Tier device;
  Tier host;
  int32_t reserved_unused = 0;  // free device blocks promised to requests by their reservations
  // Used device blocks that no request references: what freeing every cache owner
  // would give back (blocks shared with a running request stay).
  int32_t cache_only = 0;
  size_t request_tables = 0;  // tables owned by requests
  size_t cache_tables = 0;    // tables owned by cache entries

  const Tier& tier(KvTier t) const { return t == KvTier::Device ? device : host; }
  // Device blocks anyone may take without breaking a reservation.
  int32_t available() const { return device.free - reserved_unused; }
  // Used device blocks / total.
  double utilization() const { return static_cast<double>(device.used()) / device.total; }
};

}  // namespace seer
