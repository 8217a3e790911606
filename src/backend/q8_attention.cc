#include "backend/q8_attention.h"

#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

#if defined(__AVX512F__) && defined(__F16C__)
#define SEER_Q8_ATTN_AVX512 1

// The 32 int8 of a block as two f32 vectors, not yet scaled.
inline void load_quants(const BlockQ8_0& b, __m512& lo, __m512& hi) {
  const __m128i* qs = reinterpret_cast<const __m128i*>(b.qs);
  lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(qs)));
  hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(qs + 1)));
}

// The 32 elements of a block as two f32 vectors, scaled by the block's scale.
inline void load_block(const BlockQ8_0& b, __m512& lo, __m512& hi) {
  const __m512 d = _mm512_set1_ps(_cvtsh_ss(b.d));
  load_quants(b, lo, hi);
  lo = _mm512_mul_ps(lo, d);
  hi = _mm512_mul_ps(hi, d);
}

// One K row is widened once and dotted with all NQ queries.
template <int NQ>
void scores_vec(const float* const* q, const BlockQ8_0* k, int nb, int bs, float scale, float* const* s) {
  for (int j = 0; j < bs; ++j) {
    const BlockQ8_0* row = k + static_cast<size_t>(j) * nb;
    __m512 acc[NQ];
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) acc[i] = _mm512_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      __m512 lo, hi;
      load_block(row[b], lo, hi);
#pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) {
        acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(q[i] + 32 * b), lo, acc[i]);
        acc[i] = _mm512_fmadd_ps(_mm512_loadu_ps(q[i] + 32 * b + 16), hi, acc[i]);
      }
    }
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) s[i][j] = _mm512_reduce_add_ps(acc[i]) * scale;
  }
}

// NQ queries x NB blocks of accumulators in registers; each V row is widened once.
template <int NQ, int NB>
void values_vec(const float* const* p, const BlockQ8_0* v, int count, float* const* out) {
  __m512 acc[NQ][2 * NB];
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 8
    for (int u = 0; u < 2 * NB; ++u) acc[i][u] = _mm512_loadu_ps(out[i] + 16 * u);
  for (int j = 0; j < count; ++j) {
    const BlockQ8_0* row = v + static_cast<size_t>(j) * NB;
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      __m512 lo, hi;
      load_quants(row[b], lo, hi);  // the block's scale goes into each query's weight
      const float d = _cvtsh_ss(row[b].d);
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) {
        const __m512 w = _mm512_set1_ps(p[i][j] * d);
        acc[i][2 * b] = _mm512_fmadd_ps(w, lo, acc[i][2 * b]);
        acc[i][2 * b + 1] = _mm512_fmadd_ps(w, hi, acc[i][2 * b + 1]);
      }
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 8
    for (int u = 0; u < 2 * NB; ++u) _mm512_storeu_ps(out[i] + 16 * u, acc[i][u]);
}

// Any head dimension: one query at a time, accumulating in out[i].
void values_any(const float* p, const BlockQ8_0* v, int count, int nb, float* out) {
  for (int j = 0; j < count; ++j) {
    const BlockQ8_0* row = v + static_cast<size_t>(j) * nb;
    const __m512 w = _mm512_set1_ps(p[j]);
    for (int b = 0; b < nb; ++b) {
      __m512 lo, hi;
      load_block(row[b], lo, hi);
      float* o = out + 32 * b;
      _mm512_storeu_ps(o, _mm512_fmadd_ps(w, lo, _mm512_loadu_ps(o)));
      _mm512_storeu_ps(o + 16, _mm512_fmadd_ps(w, hi, _mm512_loadu_ps(o + 16)));
    }
  }
}
#endif

void scores_scalar(int nq, const float* const* q, const BlockQ8_0* k, int nb, int bs, float scale,
                   float* const* s) {
  for (int j = 0; j < bs; ++j)
    for (int i = 0; i < nq; ++i) {
      float a = 0.0f;
      for (int b = 0; b < nb; ++b) {
        const BlockQ8_0& blk = k[static_cast<size_t>(j) * nb + b];
        float part = 0.0f;
        for (int e = 0; e < kQK; ++e) part += q[i][32 * b + e] * blk.qs[e];
        a += part * fp16_to_fp32(blk.d);
      }
      s[i][j] = a * scale;
    }
}

void values_scalar(int nq, const float* const* p, const BlockQ8_0* v, int count, int nb, float* const* out) {
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < count; ++j)
      for (int b = 0; b < nb; ++b) {
        const BlockQ8_0& blk = v[static_cast<size_t>(j) * nb + b];
        const float w = p[i][j] * fp16_to_fp32(blk.d);
        for (int e = 0; e < kQK; ++e) out[i][32 * b + e] += w * blk.qs[e];
      }
}

}  // namespace

void q8_block_scores(int nq, const float* const* q, const BlockQ8_0* k, int hd, int bs, float scale,
                     float* const* s) {
  const int nb = hd / kQK;
#if defined(SEER_Q8_ATTN_AVX512)
  switch (nq) {
    case 8: return scores_vec<8>(q, k, nb, bs, scale, s);
    case 7: return scores_vec<7>(q, k, nb, bs, scale, s);
    case 6: return scores_vec<6>(q, k, nb, bs, scale, s);
    case 5: return scores_vec<5>(q, k, nb, bs, scale, s);
    case 4: return scores_vec<4>(q, k, nb, bs, scale, s);
    case 3: return scores_vec<3>(q, k, nb, bs, scale, s);
    case 2: return scores_vec<2>(q, k, nb, bs, scale, s);
    case 1: return scores_vec<1>(q, k, nb, bs, scale, s);
    default: break;
  }
#endif
  scores_scalar(nq, q, k, nb, bs, scale, s);
}

void q8_block_values(int nq, const float* const* p, const BlockQ8_0* v, int count, int hd, float* const* out) {
  const int nb = hd / kQK;
#if defined(SEER_Q8_ATTN_AVX512)
  int i = 0;
  if (nb == 2) {
    for (; i + 4 <= nq; i += 4) values_vec<4, 2>(p + i, v, count, out + i);
    for (; i + 2 <= nq; i += 2) values_vec<2, 2>(p + i, v, count, out + i);
    for (; i < nq; ++i) values_vec<1, 2>(p + i, v, count, out + i);
    return;
  }
  if (nb == 4) {
    for (; i + 2 <= nq; i += 2) values_vec<2, 4>(p + i, v, count, out + i);
    for (; i < nq; ++i) values_vec<1, 4>(p + i, v, count, out + i);
    return;
  }
  for (; i < nq; ++i) values_any(p[i], v, count, nb, out[i]);
  return;
#endif
  values_scalar(nq, p, v, count, nb, out);
}

}  // namespace seer
