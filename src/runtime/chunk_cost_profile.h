#pragma once
// Cost(l) of the real backend (docs/pensieve.md): the wall time of recomputing one
// eviction chunk of `chunk_tokens` tokens that starts at context position l, measured
// at l = 0 and at powers of two up to the longest context the device pool holds. The
// server's conversation cache ranks chunks by it (value = Cost(l) / idle time).
#include <cstdint>
#include <utility>
#include <vector>

#include "backend/backend.h"
#include "kv/conversation_cache.h"

namespace seer {

struct ChunkCostProfileOptions {
  int32_t chunk_tokens = 32;
  int32_t max_context = 0;  // longest context a request may reach (> 0)
  int repeats = 3;          // the fastest of this many timed runs per position
  double time_limit_s = 3;  // positions past it are left out (0 and the longest always run)
};

// (position, seconds), positions increasing; times are made non-decreasing (a longer
// context never costs less: a dip is load noise on a shared machine). Overwrites the
// device pool's blocks: call it before serving. Throws seer::Error for bad options or
// a pool that cannot hold one chunk.
std::vector<std::pair<int32_t, double>> profile_chunk_cost(Backend& backend, const ChunkCostProfileOptions& o);

// interpolated_chunk_cost over profile_chunk_cost's points.
ChunkCostFn measured_chunk_cost(Backend& backend, const ChunkCostProfileOptions& o);

}  // namespace seer
