// seer's quantizers for the K-quants (layouts: quant_k.cc's dequantizers). Each
// super-block in three steps:
//  1. per sub-block, the scale (and minimum) with the least squared error
//     (quant_fit), as if sub-block scales were exact;
//  2. the fp16 super-block scale(s) that map the largest of those onto the top of
//     the integer sub-scale range;
//  3. per sub-block, the integer sub-scale (and minimum) among the rounding of
//     step 1's value and its neighbours that gives the least squared error with the
//     levels re-chosen for it.
#include <algorithm>
#include <cmath>
#include <limits>

#include "model/quant.h"
#include "model/quant_fit.h"

namespace seer {
namespace {

// Sub-blocks with y = d * sc * L - dmin * m, L in [0, kMax], sc and m in [0, kScaleMax].
template <int kSub, int kMax, int kScaleMax>
struct AffineSuperBlock {
  static constexpr int kLen = kQK_K / kSub;
  uint16_t d16 = 0, dmin16 = 0;
  uint8_t sc[kSub] = {}, m[kSub] = {};
  uint8_t L[kQK_K] = {};

  explicit AffineSuperBlock(const float* x) {
    float scale[kSub], minimum[kSub];
    float max_scale = 0, max_min = 0;
    for (int s = 0; s < kSub; ++s) {
      const quant_fit::Affine a = quant_fit::fit_affine(x + s * kLen, kLen, kMax, /*offset_le_zero=*/true, L + s * kLen);
      scale[s] = a.scale;
      minimum[s] = -a.offset;
      max_scale = std::max(max_scale, scale[s]);
      max_min = std::max(max_min, minimum[s]);
    }
    d16 = fp32_to_fp16(max_scale / kScaleMax);
    dmin16 = fp32_to_fp16(max_min / kScaleMax);
    const float d = fp16_to_fp32(d16), dmin = fp16_to_fp32(dmin16);
    uint8_t cand[kLen];
    for (int s = 0; s < kSub; ++s) {
      const float* xs = x + s * kLen;
      const int sc0 = d > 0 ? quant_fit::nearest_clamped(scale[s] / d, 0, kScaleMax) : 0;
      const int m0 = dmin > 0 ? quant_fit::nearest_clamped(minimum[s] / dmin, 0, kScaleMax) : 0;
      float best = std::numeric_limits<float>::infinity();
      for (int a = std::max(0, sc0 - 1); a <= std::min(kScaleMax, sc0 + 1); ++a) {
        for (int b = std::max(0, m0 - 1); b <= std::min(kScaleMax, m0 + 1); ++b) {
          const float err = quant_fit::affine_error(xs, kLen, kMax, d * a, dmin * b, cand);
          if (err < best) {
            best = err;
            sc[s] = static_cast<uint8_t>(a);
            m[s] = static_cast<uint8_t>(b);
            std::copy(cand, cand + kLen, L + s * kLen);
          }
        }
      }
    }
  }
};

// Sub-blocks with y = d * sc * L, L in [kLo, kHi], sc in [kScaleLo, kScaleHi].
template <int kSub, int kLo, int kHi, int kScaleLo, int kScaleHi>
struct SymmetricSuperBlock {
  static constexpr int kLen = kQK_K / kSub;
  uint16_t d16 = 0;
  int sc[kSub] = {};
  int8_t L[kQK_K] = {};

  explicit SymmetricSuperBlock(const float* x) {
    float scale[kSub];
    float smax = 0;
    for (int s = 0; s < kSub; ++s) {
      scale[s] = quant_fit::fit_symmetric(x + s * kLen, kLen, kLo, kHi, L + s * kLen);
      if (std::fabs(scale[s]) > std::fabs(smax)) smax = scale[s];
    }
    d16 = fp32_to_fp16(smax / kScaleLo);
    const float d = fp16_to_fp32(d16);
    int8_t cand[kLen];
    for (int s = 0; s < kSub; ++s) {
      const float* xs = x + s * kLen;
      const int sc0 = d != 0 ? quant_fit::nearest_clamped(scale[s] / d, kScaleLo, kScaleHi) : 0;
      float best = std::numeric_limits<float>::infinity();
      for (int a = std::max(kScaleLo, sc0 - 2); a <= std::min(kScaleHi, sc0 + 2); ++a) {
        const float err = quant_fit::symmetric_error(xs, kLen, kLo, kHi, d * a, cand);
        if (err < best) {
          best = err;
          sc[s] = a;
          std::copy(cand, cand + kLen, L + s * kLen);
        }
      }
    }
  }
};

// The 2-bit fields of Q2_K/Q3_K: element e at bits 2 * ((e % 128) / 32) of
// qs[32 * (e / 128) + e % 32].
void pack_2bit(const uint8_t* u, uint8_t* qs) {
  std::fill(qs, qs + kQK_K / 4, 0);
  for (int e = 0; e < kQK_K; ++e) qs[32 * (e / 128) + e % 32] |= static_cast<uint8_t>((u[e] & 3) << (2 * ((e % 128) / 32)));
}

// Q4_K/Q5_K: low nibble of element e in qs[32 * (e / 64) + e % 32], shifted by
// 4 * ((e / 32) % 2).
void pack_4bit_k(const uint8_t* u, uint8_t* qs) {
  std::fill(qs, qs + kQK_K / 2, 0);
  for (int e = 0; e < kQK_K; ++e) qs[32 * (e / 64) + e % 32] |= static_cast<uint8_t>((u[e] & 0x0f) << (4 * ((e / 32) % 2)));
}

// Q4_K/Q5_K's 12 bytes of eight 6-bit scales and mins (the inverse of k_scale_min).
void pack_k_scales(const uint8_t* sc, const uint8_t* m, uint8_t* q) {
  std::fill(q, q + kKScaleBytes, 0);
  for (int j = 0; j < 4; ++j) {
    q[j] = sc[j];
    q[j + 4] = m[j];
  }
  for (int j = 4; j < 8; ++j) {
    q[j + 4] = static_cast<uint8_t>((sc[j] & 0x0f) | (m[j] & 0x0f) << 4);
    q[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
    q[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
  }
}

}  // namespace

void quantize_row_q2_k(const float* x, BlockQ2_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const AffineSuperBlock<16, 3, 15> sb(x + b * kQK_K);
    y[b].d = sb.d16;
    y[b].dmin = sb.dmin16;
    for (int s = 0; s < 16; ++s) y[b].scales[s] = static_cast<uint8_t>(sb.sc[s] | sb.m[s] << 4);
    pack_2bit(sb.L, y[b].qs);
  }
}

void quantize_row_q3_k(const float* x, BlockQ3_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const SymmetricSuperBlock<16, -4, 3, -32, 31> sb(x + b * kQK_K);
    BlockQ3_K& out = y[b];
    out.d = sb.d16;
    uint8_t u[kQK_K];
    for (int e = 0; e < kQK_K; ++e) u[e] = static_cast<uint8_t>(sb.L[e] + 4);
    pack_2bit(u, out.qs);
    std::fill(std::begin(out.hmask), std::end(out.hmask), 0);
    for (int e = 0; e < kQK_K; ++e) out.hmask[e % 32] |= static_cast<uint8_t>((u[e] >> 2) << (e / 32));
    std::fill(std::begin(out.scales), std::end(out.scales), 0);
    for (int j = 0; j < 16; ++j) {
      const int v = sb.sc[j] + 32;
      out.scales[j % 8] |= static_cast<uint8_t>((v & 0x0f) << (4 * (j / 8)));
      out.scales[8 + j % 4] |= static_cast<uint8_t>((v >> 4) << (2 * (j / 4)));
    }
  }
}

void quantize_row_q4_k(const float* x, BlockQ4_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const AffineSuperBlock<8, 15, 63> sb(x + b * kQK_K);
    y[b].d = sb.d16;
    y[b].dmin = sb.dmin16;
    pack_k_scales(sb.sc, sb.m, y[b].scales);
    pack_4bit_k(sb.L, y[b].qs);
  }
}

void quantize_row_q5_k(const float* x, BlockQ5_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const AffineSuperBlock<8, 31, 63> sb(x + b * kQK_K);
    y[b].d = sb.d16;
    y[b].dmin = sb.dmin16;
    pack_k_scales(sb.sc, sb.m, y[b].scales);
    pack_4bit_k(sb.L, y[b].qs);
    std::fill(std::begin(y[b].qh), std::end(y[b].qh), 0);
    for (int e = 0; e < kQK_K; ++e) y[b].qh[e % 32] |= static_cast<uint8_t>((sb.L[e] >> 4) << (e / 32));
  }
}

void quantize_row_q6_k(const float* x, BlockQ6_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const SymmetricSuperBlock<16, -32, 31, -128, 127> sb(x + b * kQK_K);
    BlockQ6_K& out = y[b];
    out.d = sb.d16;
    for (int s = 0; s < 16; ++s) out.scales[s] = static_cast<int8_t>(sb.sc[s]);
    std::fill(std::begin(out.ql), std::end(out.ql), 0);
    std::fill(std::begin(out.qh), std::end(out.qh), 0);
    for (int e = 0; e < kQK_K; ++e) {
      const int u = sb.L[e] + 32, half = e / 128, t = (e % 128) / 32, l = e % 32;
      out.ql[64 * half + 32 * (t % 2) + l] |= static_cast<uint8_t>((u & 0x0f) << (4 * (t / 2)));
      out.qh[32 * half + l] |= static_cast<uint8_t>((u >> 4) << (2 * t));
    }
  }
}

// Q8_K (activations of the K-quant dot products): one f32 scale putting the
// largest magnitude at -127, and the sums of each 16 quants.
void quantize_row_q8_k(const float* x, BlockQ8_K* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    float amax = 0, vmax = 0;
    for (int j = 0; j < kQK_K; ++j) {
      if (std::fabs(xb[j]) > amax) {
        amax = std::fabs(xb[j]);
        vmax = xb[j];
      }
    }
    if (amax == 0) {
      y[b] = BlockQ8_K{};
      continue;
    }
    const float iscale = -127.0f / vmax;
    for (int j = 0; j < kQK_K; ++j) y[b].qs[j] = static_cast<int8_t>(std::min(127, static_cast<int>(std::lround(iscale * xb[j]))));
    for (int g = 0; g < kQK_K / 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += y[b].qs[16 * g + j];
      y[b].bsums[g] = static_cast<int16_t>(sum);
    }
    y[b].d = 1 / iscale;
  }
}

}  // namespace seer
