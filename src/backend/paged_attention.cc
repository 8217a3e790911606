#include "backend/paged_attention.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "backend/quant_kv_attention.h"
#include "kernels/ops.h"
#include "kernels/simd.h"
#include "model/quant.h"

namespace seer {
namespace {

// Queries processed together against one streamed K block.
constexpr int kQueryGroup = 8;

// K/V element types (paged_kv_storage.h), widened to f32 in registers.
struct F32Elem {
  using T = float;
  static float get(T v) { return v; }
#if defined(__AVX512F__)
  static __m512 load16(const T* p) { return _mm512_loadu_ps(p); }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  static __m256 load8(const T* p) { return _mm256_loadu_ps(p); }
#endif
};

struct F16Elem {
  using T = uint16_t;
  static float get(T v) { return fp16_to_fp32(v); }
#if defined(__AVX512F__)
  static __m512 load16(const T* p) { return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p))); }
#endif
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  static __m256 load8(const T* p) { return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))); }
#endif
};

struct Bf16Elem {
  using T = uint16_t;
  static float get(T v) { return bf16_to_fp32(v); }
#if defined(__AVX512F__)
  static __m512 load16(const T* p) {
    const __m512i v = _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(v, 16));
  }
#endif
#if defined(__AVX2__) && defined(__FMA__)
  static __m256 load8(const T* p) {
    const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
  }
#endif
};

// Q8_0 / Q4_0 rows (not transposed): scores and values through quant_kv_attention.h.
struct Q8Elem {
  using T = BlockQ8_0;
  static constexpr bool kBlockRows = true;
};
struct Q4Elem {
  using T = BlockQ4_0;
  static constexpr bool kBlockRows = true;
};
template <class E>
constexpr bool block_rows() {
  if constexpr (requires { E::kBlockRows; }) return E::kBlockRows;
  return false;
}

#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
#define SEER_ATTN_AVX2 1
#endif

// s[qi][j] = scale * dot(q[qi], K[:, j]) for the bs slots of one block; kt is
// [hd][bs]. Vectorized across slots: one FMA per head element and query.
template <class E, int NQ>
void block_scores(const float* const* q, const typename E::T* kt, int hd, int bs, float scale, float* const* s) {
  int j = 0;
#if defined(__AVX512F__)
  // Even and odd head elements in separate accumulators: with one query (decode
  // without GQA) a single chain of hd dependent FMAs was latency-bound. The same
  // split for every NQ keeps a score independent of how queries are grouped.
  for (; j + 16 <= bs && hd % 2 == 0; j += 16) {
    __m512 acc[NQ][2];
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int d = 0; d < hd; d += 2) {
      const __m512 k0 = E::load16(kt + d * bs + j);
      const __m512 k1 = E::load16(kt + (d + 1) * bs + j);
#pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) {
        acc[i][0] = _mm512_fmadd_ps(_mm512_set1_ps(q[i][d]), k0, acc[i][0]);
        acc[i][1] = _mm512_fmadd_ps(_mm512_set1_ps(q[i][d + 1]), k1, acc[i][1]);
      }
    }
    const __m512 vs = _mm512_set1_ps(scale);
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) _mm512_storeu_ps(s[i] + j, _mm512_mul_ps(_mm512_add_ps(acc[i][0], acc[i][1]), vs));
  }
#endif
#if defined(SEER_ATTN_AVX2)
  for (; j + 8 <= bs; j += 8) {
    __m256 acc[NQ];
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) acc[i] = _mm256_setzero_ps();
    for (int d = 0; d < hd; ++d) {
      const __m256 kv = E::load8(kt + d * bs + j);
#pragma GCC unroll 8
      for (int i = 0; i < NQ; ++i) acc[i] = _mm256_fmadd_ps(_mm256_set1_ps(q[i][d]), kv, acc[i]);
    }
    const __m256 vs = _mm256_set1_ps(scale);
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) _mm256_storeu_ps(s[i] + j, _mm256_mul_ps(acc[i], vs));
  }
#endif
  // Explicit FMAs: GCC contracts `a += q * k` in some NQ instantiations and not in
  // others, and a score must not depend on how queries are grouped (dot_float.cc).
  for (; j < bs; ++j)
    for (int i = 0; i < NQ; ++i) {
      float a = 0.0f;
      for (int d = 0; d < hd; ++d) a = std::fma(q[i][d], E::get(kt[d * bs + j]), a);
      s[i][j] = a * scale;
    }
}

template <class E>
void block_scores_n(int nq, const float* const* q, const typename E::T* kt, int hd, int bs, float scale,
                    float* const* s) {
  switch (nq) {
    case 8: return block_scores<E, 8>(q, kt, hd, bs, scale, s);
    case 7: return block_scores<E, 7>(q, kt, hd, bs, scale, s);
    case 6: return block_scores<E, 6>(q, kt, hd, bs, scale, s);
    case 5: return block_scores<E, 5>(q, kt, hd, bs, scale, s);
    case 4: return block_scores<E, 4>(q, kt, hd, bs, scale, s);
    case 3: return block_scores<E, 3>(q, kt, hd, bs, scale, s);
    case 2: return block_scores<E, 2>(q, kt, hd, bs, scale, s);
    default: return block_scores<E, 1>(q, kt, hd, bs, scale, s);
  }
}

// out[i] += sum_j p[i][j] * V[j] over `count` slots of one block (V is [bs][hd]) for
// NQ queries at once: each V row is loaded once for all of them, and the NQ * hd/16
// accumulators are independent FMA chains.
#if defined(__AVX512F__)
template <class E, int NQ, int NV>
void block_values_vec(const float* const* p, const typename E::T* vb, int count, float* const* out) {
  __m512 acc[NQ][NV];
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[i][v] = _mm512_loadu_ps(out[i] + 16 * v);
  for (int j = 0; j < count; ++j) {
    const typename E::T* row = vb + j * NV * 16;
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) {
      const __m512 vv = E::load16(row + 16 * v);
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) acc[i][v] = _mm512_fmadd_ps(_mm512_set1_ps(p[i][j]), vv, acc[i][v]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i)
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(out[i] + 16 * v, acc[i][v]);
}
#endif

// Handles nq (<= 8) queries; returns after updating every out[i].
template <class E>
void block_values(int nq, const float* const* p, const typename E::T* vb, int count, int hd, float* const* out) {
#if defined(__AVX512F__)
  if (hd == 64) {
    int i = 0;
    for (; i + 4 <= nq; i += 4) block_values_vec<E, 4, 4>(p + i, vb, count, out + i);
    for (; i + 2 <= nq; i += 2) block_values_vec<E, 2, 4>(p + i, vb, count, out + i);
    for (; i < nq; ++i) block_values_vec<E, 1, 4>(p + i, vb, count, out + i);
    return;
  }
  if (hd == 128) {
    int i = 0;
    for (; i + 2 <= nq; i += 2) block_values_vec<E, 2, 8>(p + i, vb, count, out + i);
    for (; i < nq; ++i) block_values_vec<E, 1, 8>(p + i, vb, count, out + i);
    return;
  }
#endif
  for (int i = 0; i < nq; ++i)
    for (int j = 0; j < count; ++j) {
      const float pij = p[i][j];
      const typename E::T* row = vb + j * hd;
      for (int d = 0; d < hd; ++d) out[i][d] += pij * E::get(row[d]);
    }
}

// Blocks of one sequence are scattered over the pool, so the hardware prefetchers
// start cold at every 4 KiB block; fetch the next block's keys (and this block's
// values, used in the second pass) while the current one is computed.
void prefetch(const void* p, size_t bytes, int hint_l1) {
  const char* c = static_cast<const char*>(p);
  for (size_t off = 0; off < bytes; off += 64) {
    if (hint_l1) __builtin_prefetch(c + off, 0, 3);
    else __builtin_prefetch(c + off, 0, 2);
  }
}

}  // namespace

PagedAttention::PagedAttention(int n_heads, int n_kv_heads, int head_dim, int threads, float scale, float softcap)
    : n_heads_(n_heads),
      n_kv_heads_(n_kv_heads),
      head_dim_(head_dim),
      group_(n_heads / n_kv_heads),
      scale_(scale > 0.0f ? scale : 1.0f / std::sqrt(static_cast<float>(head_dim))),
      softcap_(softcap),
      scores_(threads) {}

void PagedAttention::run(ThreadPool& pool, const ForwardBatch& batch, const PagedKvStorage& kv, int layer,
                         const float* q, float* out, int window) {
  // Tiles of consecutive positions of one sequence share K/V reads; keep about 16
  // query vectors per tile so that long prompts still split into many work items. A
  // tile never spans two ranges of a sequence: it reads every block from its first
  // query's window to its last query, and a sliding-window layer's blocks between two
  // ranges may be freed (kv/kv_layer_groups.h).
  const int32_t max_tile = std::max(1, 16 / group_);
  tiles_.clear();
  const int32_t n = static_cast<int32_t>(batch.size());
  for (int32_t t = 0; t < n;) {
    int32_t e = t + 1;
    while (e < n && e - t < max_tile && batch.seq_index[e] == batch.seq_index[t] &&
           batch.positions[e] == batch.positions[e - 1] + 1)
      ++e;
    tiles_.push_back({t, e - t});
    t = e;
  }
  switch (kv.type()) {
    case KvType::F32: return run_items<F32Elem>(pool, batch, kv, layer, q, out, window);
    case KvType::F16: return run_items<F16Elem>(pool, batch, kv, layer, q, out, window);
    case KvType::BF16: return run_items<Bf16Elem>(pool, batch, kv, layer, q, out, window);
    case KvType::Q8_0: return run_items<Q8Elem>(pool, batch, kv, layer, q, out, window);
    case KvType::Q4_0: return run_items<Q4Elem>(pool, batch, kv, layer, q, out, window);
  }
}

template <class E>
void PagedAttention::run_items(ThreadPool& pool, const ForwardBatch& batch, const PagedKvStorage& kv, int layer,
                               const float* q, float* out, int window) {
  const int64_t items = static_cast<int64_t>(tiles_.size()) * n_kv_heads_;
  pool.parallel_for(items, [&](int64_t item, int thread) {
    run_item<E>(batch, kv, layer, q, out, tiles_[item / n_kv_heads_], static_cast<int>(item % n_kv_heads_), thread,
                window);
  });
}

template <class E>
void PagedAttention::run_item(const ForwardBatch& batch, const PagedKvStorage& kv, int layer, const float* q,
                              float* out, const Tile& tile, int kv_head, int thread, int window) {
  const int hd = head_dim_;
  const int bs = kv.shape().block_size;
  const int q_stride = n_heads_ * hd;
  const auto& table = batch.sequences[batch.seq_index[tile.first]].block_table;
  const int nq_total = tile.count * group_;
  std::vector<float>& scores = scores_[thread];

  for (int g0 = 0; g0 < nq_total; g0 += kQueryGroup) {
    const int nq = std::min(kQueryGroup, nq_total - g0);
    const float* qp[kQueryGroup];
    float* op[kQueryGroup];
    int32_t limit[kQueryGroup];  // visible positions are start[i] .. limit[i] - 1
    int32_t start[kQueryGroup];
    int32_t max_limit = 0, min_start = std::numeric_limits<int32_t>::max();
    for (int i = 0; i < nq; ++i) {
      const int qi = g0 + i;
      const int32_t tok = tile.first + qi / group_;
      const int head = kv_head * group_ + qi % group_;
      qp[i] = q + static_cast<size_t>(tok) * q_stride + head * hd;
      op[i] = out + static_cast<size_t>(tok) * q_stride + head * hd;
      limit[i] = batch.positions[tok] + 1;
      start[i] = window > 0 ? std::max(0, limit[i] - window) : 0;
      max_limit = std::max(max_limit, limit[i]);
      min_start = std::min(min_start, start[i]);
    }
    const int32_t n_blocks = (max_limit + bs - 1) / bs;
    const int32_t first_block = min_start / bs;  // blocks before it are outside every window
    const size_t row = static_cast<size_t>(n_blocks) * bs;
    if (scores.size() < row * nq) scores.resize(row * nq);
    float* srow[kQueryGroup];
    for (int i = 0; i < nq; ++i) srow[i] = scores.data() + i * row;

    using T = typename E::T;
    const size_t piece_bytes = kv.head_bytes();
    for (int32_t b = first_block; b < n_blocks; ++b) {
      if (b + 1 < n_blocks) prefetch(kv.k_block(kv.block_of(table, b + 1, layer), layer, kv_head), piece_bytes, 1);
      prefetch(kv.v_block(kv.block_of(table, b, layer), layer, kv_head), piece_bytes, 0);
      float* s[kQueryGroup];
      for (int i = 0; i < nq; ++i) s[i] = srow[i] + static_cast<size_t>(b) * bs;
      const T* kb = static_cast<const T*>(kv.k_block(kv.block_of(table, b, layer), layer, kv_head));
      if constexpr (block_rows<E>()) quant_block_scores(nq, qp, kb, hd, bs, scale_, s);
      else block_scores_n<E>(nq, qp, kb, hd, bs, scale_, s);
    }
    for (int i = 0; i < nq; ++i) {
      float* si = srow[i];
      float* sv = si + start[i];
      const int32_t nv = limit[i] - start[i];
      if (softcap_ > 0.0f) softcap_inplace(sv, nv, softcap_);
      float mx = -std::numeric_limits<float>::infinity();
      for (int32_t j = 0; j < nv; ++j) mx = std::max(mx, sv[j]);
      const float inv = 1.0f / exp_shifted_inplace(sv, nv, mx);
      for (int32_t j = 0; j < nv; ++j) sv[j] *= inv;
      std::fill(si + first_block * bs, sv, 0.0f);  // masked positions weigh nothing
      std::fill(si + limit[i], si + row, 0.0f);
      std::fill(op[i], op[i] + hd, 0.0f);
    }
    // Every query sees full blocks up to its own last block; the last block of each
    // query is partly masked with zero weights.
    for (int32_t b = first_block; b < n_blocks; ++b) {
      const float* pb[kQueryGroup];
      float* ob[kQueryGroup];
      int m = 0;
      for (int i = 0; i < nq; ++i) {
        if (b * bs >= limit[i] || (b + 1) * bs <= start[i]) continue;
        pb[m] = srow[i] + static_cast<size_t>(b) * bs;
        ob[m++] = op[i];
      }
      const int count = std::min(bs, max_limit - b * bs);
      const T* vb = static_cast<const T*>(kv.v_block(kv.block_of(table, b, layer), layer, kv_head));
      if constexpr (block_rows<E>()) quant_block_values(m, pb, vb, count, hd, ob);
      else block_values<E>(m, pb, vb, count, hd, ob);
    }
  }
}

}  // namespace seer
