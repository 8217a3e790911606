#pragma once
// The two inner loops of paged attention over Q8_0 K/V rows (paged_kv_storage.h):
// each stored row is head_dim / 32 Q8_0 blocks. Queries and weights stay f32; a
// K or V row is widened to f32 in registers (int8 times its block's f16 scale),
// so the only error is the one made when the row was stored.
#include <cstdint>

#include "model/quant_blocks.h"

namespace seer {

// s[i][j] = scale * dot(q[i], K[j]) for the nq (<= 8) queries and the bs rows of
// one block; k holds bs rows of hd / 32 blocks.
void q8_block_scores(int nq, const float* const* q, const BlockQ8_0* k, int hd, int bs, float scale,
                     float* const* s);
// out[i] += sum_j p[i][j] * V[j] over the first `count` rows of one block, for nq
// (<= 8) queries.
void q8_block_values(int nq, const float* const* p, const BlockQ8_0* v, int count, int hd, float* const* out);

}  // namespace seer
