#pragma once
// Pensieve's Cost(l) from measured or modelled points (docs/pensieve.md): the cost of
// recomputing one eviction chunk that starts at context position l, known at a few
// positions (0 and powers of two) and linear in between.
#include <cstdint>
#include <utility>
#include <vector>

#include "kv/conversation_cache.h"

namespace seer {

// (position, cost) pairs. Piecewise linear through them; below the first point its
// cost, past the last the last segment's slope continues (attention grows linearly
// with the context). Throws seer::Error when there is no point, a position repeats
// or a cost is negative or not finite.
ChunkCostFn interpolated_chunk_cost(std::vector<std::pair<int32_t, double>> points);

}  // namespace seer
