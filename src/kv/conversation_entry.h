#pragma once
// One entry of the conversation cache (kv/conversation_cache.h): a token history
// and the KvManager table of its cache owner. Its logical blocks are laid out,
// from the leading end:
//   [0, dropped)          on no tier: recomputed when the conversation returns
//   [dropped, clean)      host only
//   [clean, device_only)  on both tiers (swapped out ahead of time; the device
//                         block is reclaimed lazily, without a copy)
//   [device_only, n)      device only
// Eviction (kv/tier_evictor.h) always takes the leading chunk of a tier, so this
// layout holds by construction.
#include <cstdint>
#include <string>
#include <vector>

#include "kv/kv_types.h"

namespace seer {

struct ConversationEntry {
  KvOwner owner;
  std::string name;             // "" for anonymous entries
  std::string tenant;
  std::vector<int32_t> tokens;  // the history
  int32_t kv_tokens = 0;        // tokens covered by the table
  int32_t num_blocks = 0;       // logical blocks of the table
  int32_t dropped = 0;          // layout cursors, in blocks (see above)
  int32_t clean = 0;
  int32_t device_only = 0;
  double last_active = 0;
  std::vector<uint64_t> hashes;  // chained hash per full block (prefix reuse)
};

}  // namespace seer
