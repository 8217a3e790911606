#include "backend/quant_kv_attention.h"

#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

// What each block type means: quant(b, e) is element e's integer (times the
// block's scale d gives the stored value), and the vector loads widen all 32
// quants of a block to f32, unscaled, in element order.
struct Q8Block {
  using B = BlockQ8_0;
  static int quant(const B& b, int e) { return b.qs[e]; }
#if defined(__AVX512F__) && defined(__F16C__)
  static void load(const B& b, __m512& lo, __m512& hi) {
    const __m128i* qs = reinterpret_cast<const __m128i*>(b.qs);
    lo = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(qs)));
    hi = _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(_mm_loadu_si128(qs + 1)));
  }
#endif
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static void load(const B& b, __m256 (&x)[4]) {
    for (int i = 0; i < 4; ++i)
      x[i] = _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(b.qs + 8 * i))));
  }
#endif
};

// Q4_0: element e < 16 in the low nibble of qs[e], e >= 16 in the high nibble of
// qs[e - 16]; the stored nibble is the quant plus 8.
struct Q4Block {
  using B = BlockQ4_0;
  static int quant(const B& b, int e) { return (e < 16 ? b.qs[e] & 0x0f : b.qs[e - 16] >> 4) - 8; }
#if defined(__AVX512F__) && defined(__F16C__)
  static void load(const B& b, __m512& lo, __m512& hi) {
    const __m512i w = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs)));
    const __m512i eight = _mm512_set1_epi32(8);
    lo = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_and_si512(w, _mm512_set1_epi32(0x0f)), eight));
    hi = _mm512_cvtepi32_ps(_mm512_sub_epi32(_mm512_srli_epi32(w, 4), eight));
  }
#endif
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static void load(const B& b, __m256 (&x)[4]) {
    const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b.qs));
    const __m256i w0 = _mm256_cvtepu8_epi32(raw);                     // bytes 0..7
    const __m256i w1 = _mm256_cvtepu8_epi32(_mm_srli_si128(raw, 8));  // bytes 8..15
    const __m256i mask = _mm256_set1_epi32(0x0f), eight = _mm256_set1_epi32(8);
    x[0] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(w0, mask), eight));
    x[1] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_and_si256(w1, mask), eight));
    x[2] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(w0, 4), eight));
    x[3] = _mm256_cvtepi32_ps(_mm256_sub_epi32(_mm256_srli_epi32(w1, 4), eight));
  }
#endif
};

#if defined(__AVX512F__) && defined(__F16C__)
#define SEER_QKV_AVX512 1
namespace avx512 {

// One K row is widened once and dotted with all NQ queries.
template <class T, int NQ>
void scores(const float* const* q, const typename T::B* k, int nb, int bs, float scale, float* const* s) {
  for (int j = 0; j < bs; ++j) {
    const typename T::B* row = k + static_cast<size_t>(j) * nb;
    __m512 acc[NQ];
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) acc[i] = _mm512_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      __m512 lo, hi;
      T::load(row[b], lo, hi);
      const __m512 d = _mm512_set1_ps(_cvtsh_ss(row[b].d));
      lo = _mm512_mul_ps(lo, d);
      hi = _mm512_mul_ps(hi, d);
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
template <class T, int NQ, int NB>
void values(const float* const* p, const typename T::B* v, int count, float* const* out) {
  __m512 acc[NQ][2 * NB];
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 8
    for (int u = 0; u < 2 * NB; ++u) acc[i][u] = _mm512_loadu_ps(out[i] + 16 * u);
  for (int j = 0; j < count; ++j) {
    const typename T::B* row = v + static_cast<size_t>(j) * NB;
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      __m512 lo, hi;
      T::load(row[b], lo, hi);  // the block's scale goes into each query's weight
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

// Any head dimension: one query at a time, accumulating in out.
template <class T>
void values_any(const float* p, const typename T::B* v, int count, int nb, float* out) {
  for (int j = 0; j < count; ++j) {
    const typename T::B* row = v + static_cast<size_t>(j) * nb;
    for (int b = 0; b < nb; ++b) {
      __m512 lo, hi;
      T::load(row[b], lo, hi);
      const __m512 w = _mm512_set1_ps(p[j] * _cvtsh_ss(row[b].d));
      float* o = out + 32 * b;
      _mm512_storeu_ps(o, _mm512_fmadd_ps(w, lo, _mm512_loadu_ps(o)));
      _mm512_storeu_ps(o + 16, _mm512_fmadd_ps(w, hi, _mm512_loadu_ps(o + 16)));
    }
  }
}

template <class T>
void scores_n(int nq, const float* const* q, const typename T::B* k, int nb, int bs, float scale, float* const* s) {
  switch (nq) {
    case 8: return scores<T, 8>(q, k, nb, bs, scale, s);
    case 7: return scores<T, 7>(q, k, nb, bs, scale, s);
    case 6: return scores<T, 6>(q, k, nb, bs, scale, s);
    case 5: return scores<T, 5>(q, k, nb, bs, scale, s);
    case 4: return scores<T, 4>(q, k, nb, bs, scale, s);
    case 3: return scores<T, 3>(q, k, nb, bs, scale, s);
    case 2: return scores<T, 2>(q, k, nb, bs, scale, s);
    default: return scores<T, 1>(q, k, nb, bs, scale, s);
  }
}

template <class T>
void values_n(int nq, const float* const* p, const typename T::B* v, int count, int nb, float* const* out) {
  int i = 0;
  if (nb == 2) {
    for (; i + 4 <= nq; i += 4) values<T, 4, 2>(p + i, v, count, out + i);
    for (; i + 2 <= nq; i += 2) values<T, 2, 2>(p + i, v, count, out + i);
    for (; i < nq; ++i) values<T, 1, 2>(p + i, v, count, out + i);
  } else if (nb == 4) {
    for (; i + 2 <= nq; i += 2) values<T, 2, 4>(p + i, v, count, out + i);
    for (; i < nq; ++i) values<T, 1, 4>(p + i, v, count, out + i);
  } else {
    for (; i < nq; ++i) values_any<T>(p[i], v, count, nb, out[i]);
  }
}

}  // namespace avx512
#endif

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SEER_QKV_AVX2 1
namespace avx2 {

// 16 ymm registers: NQ accumulators plus the four widened vectors of a block.
template <class T, int NQ>
void scores(const float* const* q, const typename T::B* k, int nb, int bs, float scale, float* const* s) {
  for (int j = 0; j < bs; ++j) {
    const typename T::B* row = k + static_cast<size_t>(j) * nb;
    __m256 acc[NQ];
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) acc[i] = _mm256_setzero_ps();
    for (int b = 0; b < nb; ++b) {
      __m256 x[4];
      T::load(row[b], x);
      const __m256 d = _mm256_set1_ps(_cvtsh_ss(row[b].d));
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) x[u] = _mm256_mul_ps(x[u], d);
#pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 4
        for (int u = 0; u < 4; ++u) acc[i] = _mm256_fmadd_ps(_mm256_loadu_ps(q[i] + 32 * b + 8 * u), x[u], acc[i]);
    }
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) s[i][j] = simd::hsum(acc[i]) * scale;
  }
}

// One head block (32 outputs) of one query in four registers per row.
template <class T>
void values_one(const float* p, const typename T::B* v, int count, int nb, float* out) {
  for (int b = 0; b < nb; ++b) {
    float* o = out + 32 * b;
    __m256 acc[4];
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) acc[u] = _mm256_loadu_ps(o + 8 * u);
    for (int j = 0; j < count; ++j) {
      const typename T::B& blk = v[static_cast<size_t>(j) * nb + b];
      __m256 x[4];
      T::load(blk, x);
      const __m256 w = _mm256_set1_ps(p[j] * _cvtsh_ss(blk.d));
#pragma GCC unroll 4
      for (int u = 0; u < 4; ++u) acc[u] = _mm256_fmadd_ps(w, x[u], acc[u]);
    }
#pragma GCC unroll 4
    for (int u = 0; u < 4; ++u) _mm256_storeu_ps(o + 8 * u, acc[u]);
  }
}

template <class T>
void scores_n(int nq, const float* const* q, const typename T::B* k, int nb, int bs, float scale, float* const* s) {
  switch (nq) {
    case 8: return scores<T, 8>(q, k, nb, bs, scale, s);
    case 7: return scores<T, 7>(q, k, nb, bs, scale, s);
    case 6: return scores<T, 6>(q, k, nb, bs, scale, s);
    case 5: return scores<T, 5>(q, k, nb, bs, scale, s);
    case 4: return scores<T, 4>(q, k, nb, bs, scale, s);
    case 3: return scores<T, 3>(q, k, nb, bs, scale, s);
    case 2: return scores<T, 2>(q, k, nb, bs, scale, s);
    default: return scores<T, 1>(q, k, nb, bs, scale, s);
  }
}

template <class T>
void values_n(int nq, const float* const* p, const typename T::B* v, int count, int nb, float* const* out) {
  for (int i = 0; i < nq; ++i) values_one<T>(p[i], v, count, nb, out[i]);
}

}  // namespace avx2
#endif

namespace scalar {

template <class T>
void scores(int nq, const float* const* q, const typename T::B* k, int nb, int bs, float scale, float* const* s) {
  for (int j = 0; j < bs; ++j)
    for (int i = 0; i < nq; ++i) {
      float a = 0.0f;
      for (int b = 0; b < nb; ++b) {
        const typename T::B& blk = k[static_cast<size_t>(j) * nb + b];
        float part = 0.0f;
        for (int e = 0; e < kQK; ++e) part += q[i][32 * b + e] * static_cast<float>(T::quant(blk, e));
        a += part * fp16_to_fp32(blk.d);
      }
      s[i][j] = a * scale;
    }
}

template <class T>
void values(int nq, const float* const* p, const typename T::B* v, int count, int nb, float* const* out) {
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < count; ++j)
      for (int b = 0; b < nb; ++b) {
        const typename T::B& blk = v[static_cast<size_t>(j) * nb + b];
        const float w = p[i][j] * fp16_to_fp32(blk.d);
        for (int e = 0; e < kQK; ++e) out[i][32 * b + e] += w * static_cast<float>(T::quant(blk, e));
      }
}

}  // namespace scalar

template <class T>
void scores_on(QuantKvIsa isa, int nq, const float* const* q, const typename T::B* k, int hd, int bs, float scale,
               float* const* s) {
  const int nb = hd / kQK;
#if defined(SEER_QKV_AVX512)
  if (isa == QuantKvIsa::Avx512) return avx512::scores_n<T>(nq, q, k, nb, bs, scale, s);
#endif
#if defined(SEER_QKV_AVX2)
  if (isa == QuantKvIsa::Avx2) return avx2::scores_n<T>(nq, q, k, nb, bs, scale, s);
#endif
  scalar::scores<T>(nq, q, k, nb, bs, scale, s);
}

template <class T>
void values_on(QuantKvIsa isa, int nq, const float* const* p, const typename T::B* v, int count, int hd,
               float* const* out) {
  const int nb = hd / kQK;
#if defined(SEER_QKV_AVX512)
  if (isa == QuantKvIsa::Avx512) return avx512::values_n<T>(nq, p, v, count, nb, out);
#endif
#if defined(SEER_QKV_AVX2)
  if (isa == QuantKvIsa::Avx2) return avx2::values_n<T>(nq, p, v, count, nb, out);
#endif
  scalar::values<T>(nq, p, v, count, nb, out);
}

}  // namespace

const char* quant_kv_isa_name(QuantKvIsa isa) {
  switch (isa) {
    case QuantKvIsa::Scalar: return "scalar";
    case QuantKvIsa::Avx2: return "avx2";
    case QuantKvIsa::Avx512: return "avx512";
  }
  return "?";
}

void quant_block_scores(int nq, const float* const* q, const BlockQ8_0* k, int hd, int bs, float scale,
                        float* const* s, QuantKvIsa isa) {
  scores_on<Q8Block>(isa, nq, q, k, hd, bs, scale, s);
}

void quant_block_scores(int nq, const float* const* q, const BlockQ4_0* k, int hd, int bs, float scale,
                        float* const* s, QuantKvIsa isa) {
  scores_on<Q4Block>(isa, nq, q, k, hd, bs, scale, s);
}

void quant_block_values(int nq, const float* const* p, const BlockQ8_0* v, int count, int hd, float* const* out,
                        QuantKvIsa isa) {
  values_on<Q8Block>(isa, nq, p, v, count, hd, out);
}

void quant_block_values(int nq, const float* const* p, const BlockQ4_0* v, int count, int hd, float* const* out,
                        QuantKvIsa isa) {
  values_on<Q4Block>(isa, nq, p, v, count, hd, out);
}

}  // namespace seer
