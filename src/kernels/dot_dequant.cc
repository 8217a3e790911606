#include "kernels/dot_dequant.h"

#include <vector>

#include "kernels/convert.h"
#include "kernels/simd.h"

namespace seer {
namespace {

// Eight (AVX2) or sixteen (AVX-512) partial sums, then a fixed-order reduction: the
// result depends only on the two rows.
float dot_f32(const float* a, const float* b, int64_t k) {
  int64_t i = 0;
  float sum = 0.0f;
#if defined(__AVX512F__)
  __m512 acc = _mm512_setzero_ps();
  for (; i + 16 <= k; i += 16) acc = _mm512_fmadd_ps(_mm512_loadu_ps(a + i), _mm512_loadu_ps(b + i), acc);
  sum = _mm512_reduce_add_ps(acc);
#elif defined(__AVX2__) && defined(__FMA__)
  __m256 acc = _mm256_setzero_ps();
  for (; i + 8 <= k; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, acc);
  for (float l : lanes) sum += l;
#endif
  for (; i < k; ++i) sum += a[i] * b[i];
  return sum;
}

}  // namespace

void dot_rows_dequant(const WeightTensor& w, int64_t r0, int64_t r1, const float* x, int64_t n, float* y,
                      int64_t ldy) {
  thread_local std::vector<float> row;  // per pool thread, reused across calls
  row.resize(static_cast<size_t>(w.cols));
  for (int64_t r = r0; r < r1; ++r) {
    to_f32_row(w.type, weight_row(w, r), row.data(), w.cols);
    for (int64_t c = 0; c < n; ++c) y[c * ldy + r] = dot_f32(row.data(), x + c * w.cols, w.cols);
  }
}

}  // namespace seer
