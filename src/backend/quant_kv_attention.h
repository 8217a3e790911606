#pragma once
// The two inner loops of paged attention over block-quantized K/V rows
// (paged_kv_storage.h): each stored row is head_dim / 32 Q8_0 or Q4_0 blocks.
// Queries and weights stay f32; a K or V row is widened to f32 in registers
// (integer quants times the block's f16 scale), so the only error is the one made
// when the row was stored. AVX-512 and AVX2 paths where the build has them, a
// scalar path otherwise; all three compute the same products in f32.
#include <cstdint>

#include "model/quant_blocks.h"

namespace seer {

// Which vector path runs: every build has Scalar; Avx2 needs AVX2+FMA+F16C and
// Avx512 AVX-512F+F16C at compile time. The attention uses kBestQuantKvIsa; the
// tests run every available path against the scalar one.
enum class QuantKvIsa : uint8_t { Scalar, Avx2, Avx512 };
#if defined(__AVX512F__) && defined(__F16C__)
inline constexpr QuantKvIsa kBestQuantKvIsa = QuantKvIsa::Avx512;
#elif defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
inline constexpr QuantKvIsa kBestQuantKvIsa = QuantKvIsa::Avx2;
#else
inline constexpr QuantKvIsa kBestQuantKvIsa = QuantKvIsa::Scalar;
#endif
constexpr bool quant_kv_isa_available(QuantKvIsa isa) { return isa <= kBestQuantKvIsa; }
const char* quant_kv_isa_name(QuantKvIsa isa);

// s[i][j] = scale * dot(q[i], K[j]) for the nq (<= 8) queries and the bs rows of
// one block; k holds bs rows of hd / 32 blocks. An isa this build lacks runs Scalar.
void quant_block_scores(int nq, const float* const* q, const BlockQ8_0* k, int hd, int bs, float scale,
                        float* const* s, QuantKvIsa isa = kBestQuantKvIsa);
void quant_block_scores(int nq, const float* const* q, const BlockQ4_0* k, int hd, int bs, float scale,
                        float* const* s, QuantKvIsa isa = kBestQuantKvIsa);
// out[i] += sum_j p[i][j] * V[j] over the first `count` rows of one block, for nq
// (<= 8) queries.
void quant_block_values(int nq, const float* const* p, const BlockQ8_0* v, int count, int hd, float* const* out,
                        QuantKvIsa isa = kBestQuantKvIsa);
void quant_block_values(int nq, const float* const* p, const BlockQ4_0* v, int count, int hd, float* const* out,
                        QuantKvIsa isa = kBestQuantKvIsa);

}  // namespace seer
