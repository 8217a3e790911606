#include "kernels/ops.h"

#include <cmath>
#include <limits>

#include "common/error.h"
#include "kernels/convert.h"
#include "kernels/vec_math.h"

namespace seer {

void rmsnorm(const float* x, const float* w, float* y, int64_t n, int64_t d, float eps) {
  for (int64_t r = 0; r < n; ++r, x += d, y += d) {
    double ss = 0.0;
    for (int64_t i = 0; i < d; ++i) ss += static_cast<double>(x[i]) * x[i];
    const float scale = static_cast<float>(1.0 / std::sqrt(ss / static_cast<double>(d) + eps));
    for (int64_t i = 0; i < d; ++i) y[i] = x[i] * scale * w[i];
  }
}

void gelu_tanh_mul(const float* g, const float* u, float* h, int64_t n) {
  constexpr float kSqrt2OverPi = 0.7978845608028654f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = g[i];
    h[i] = 0.5f * x * (1.0f + std::tanh(kSqrt2OverPi * x * (1.0f + 0.044715f * x * x))) * u[i];
  }
}

void scale_inplace(float* x, int64_t n, float s) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void softcap_inplace(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

void silu_mul(const float* g, const float* u, float* h, int64_t n) {
  int64_t i = 0;
#if defined(__AVX512F__)
  const __m512 one = _mm512_set1_ps(1.0f);
  for (; i + 16 <= n; i += 16) {
    const __m512 gv = _mm512_loadu_ps(g + i);
    const __m512 e = simd::exp512(_mm512_sub_ps(_mm512_setzero_ps(), gv));
    _mm512_storeu_ps(h + i, _mm512_mul_ps(_mm512_div_ps(gv, _mm512_add_ps(one, e)), _mm512_loadu_ps(u + i)));
  }
#elif defined(__AVX2__) && defined(__FMA__)
  const __m256 one = _mm256_set1_ps(1.0f);
  for (; i + 8 <= n; i += 8) {
    const __m256 gv = _mm256_loadu_ps(g + i);
    const __m256 e = simd::exp256(_mm256_sub_ps(_mm256_setzero_ps(), gv));
    _mm256_storeu_ps(h + i, _mm256_mul_ps(_mm256_div_ps(gv, _mm256_add_ps(one, e)), _mm256_loadu_ps(u + i)));
  }
#endif
  for (; i < n; ++i) h[i] = g[i] / (1.0f + std::exp(-g[i])) * u[i];
}

void add_inplace(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}

float exp_shifted_inplace(float* x, int64_t n, float shift) {
  int64_t i = 0;
  float sum = 0.0f;
#if defined(__AVX512F__)
  const __m512 vs = _mm512_set1_ps(shift);
  __m512 acc = _mm512_setzero_ps();
  for (; i + 16 <= n; i += 16) {
    const __m512 e = simd::exp512(_mm512_sub_ps(_mm512_loadu_ps(x + i), vs));
    _mm512_storeu_ps(x + i, e);
    acc = _mm512_add_ps(acc, e);
  }
  sum = simd::hsum(acc);
#elif defined(__AVX2__) && defined(__FMA__)
  const __m256 vs = _mm256_set1_ps(shift);
  __m256 acc = _mm256_setzero_ps();
  for (; i + 8 <= n; i += 8) {
    const __m256 e = simd::exp256(_mm256_sub_ps(_mm256_loadu_ps(x + i), vs));
    _mm256_storeu_ps(x + i, e);
    acc = _mm256_add_ps(acc, e);
  }
  sum = simd::hsum(acc);
#endif
  for (; i < n; ++i) {
    x[i] = std::exp(x[i] - shift);
    sum += x[i];
  }
  return sum;
}

float softmax_inplace(float* x, int64_t n) {
  float mx = -std::numeric_limits<float>::infinity();
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]);
  const float sum = exp_shifted_inplace(x, n, mx);
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
  return sum;
}

void embed_rows(const WeightTensor& table, const int32_t* ids, int64_t n, float* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= table.rows)
      fail("token id {} is outside the vocabulary (0..{})", ids[i], table.rows - 1);
    to_f32_row(table.type, weight_row(table, ids[i]), out + i * table.cols, table.cols);
  }
}

Rope::Rope(int head_dim, double base, bool neox, double linear_factor, const float* freq_divisors, int rot_dim,
           double mscale)
    : head_dim_(head_dim),
      rot_dim_(rot_dim > 0 ? rot_dim : head_dim),
      neox_(neox),
      pos_scale_(1.0 / linear_factor),
      mscale_(mscale),
      inv_freq_(rot_dim_ / 2) {
  for (int i = 0; i < rot_dim_ / 2; ++i) {
    inv_freq_[i] = std::pow(base, -2.0 * i / rot_dim_);
    if (freq_divisors) inv_freq_[i] /= freq_divisors[i];
  }
}

void Rope::angles(int32_t pos, float* cos_out, float* sin_out) const {
  const double p = pos * pos_scale_;
  for (size_t i = 0; i < inv_freq_.size(); ++i) {
    const double theta = p * inv_freq_[i];
    cos_out[i] = static_cast<float>(std::cos(theta) * mscale_);
    sin_out[i] = static_cast<float>(std::sin(theta) * mscale_);
  }
}

void Rope::apply(float* x, int n_heads, const float* c, const float* s) const {
  const int half = rot_dim_ / 2;
  for (int h = 0; h < n_heads; ++h, x += head_dim_) {
    if (neox_) {
      for (int i = 0; i < half; ++i) {
        const float a = x[i], b = x[i + half];
        x[i] = a * c[i] - b * s[i];
        x[i + half] = a * s[i] + b * c[i];
      }
    } else {
      for (int i = 0; i < half; ++i) {
        const float a = x[2 * i], b = x[2 * i + 1];
        x[2 * i] = a * c[i] - b * s[i];
        x[2 * i + 1] = a * s[i] + b * c[i];
      }
    }
  }
}

}  // namespace seer
