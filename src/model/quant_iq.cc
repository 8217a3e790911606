// The non-linear 4-bit formats IQ4_NL (32-element blocks, one fp16 scale) and
// IQ4_XS (256-element super-blocks, a 6-bit scale per 32 elements): each 4-bit
// index selects one of the 16 values of kIQ4NLValues.
#include <algorithm>
#include <cmath>

#include "model/quant.h"
#include "model/quant_fit.h"

namespace seer {

int iq4_xs_scale(const BlockIQ4_XS& b, int j) {
  const int lo = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f;
  const int hi = (b.scales_h >> (2 * j)) & 3;
  return (lo | hi << 4) - 32;
}

void dequantize_row_iq4_nl(const BlockIQ4_NL* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b, y += kQK) {
    const float d = fp16_to_fp32(x[b].d);
    for (int j = 0; j < kQK / 2; ++j) {
      y[j] = d * kIQ4NLValues[x[b].qs[j] & 0x0f];
      y[j + kQK / 2] = d * kIQ4NLValues[x[b].qs[j] >> 4];
    }
  }
}

void dequantize_row_iq4_xs(const BlockIQ4_XS* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int s = 0; s < kQK_K / kQK; ++s, y += kQK) {
      const float dl = d * iq4_xs_scale(x[b], s);
      const uint8_t* qs = x[b].qs + s * kQK / 2;
      for (int j = 0; j < kQK / 2; ++j) {
        y[j] = dl * kIQ4NLValues[qs[j] & 0x0f];
        y[j + kQK / 2] = dl * kIQ4NLValues[qs[j] >> 4];
      }
    }
  }
}

// IQ4_NL: per block the table scale with the least squared error, rounded to fp16.
void quantize_row_iq4_nl(const float* x, BlockIQ4_NL* y, int64_t n) {
  uint8_t L[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* xb = x + b * kQK;
    y[b].d = fp32_to_fp16(quant_fit::fit_nonlinear(xb, kQK, L));
    quant_fit::nonlinear_error(xb, kQK, fp16_to_fp32(y[b].d), L);
    for (int j = 0; j < kQK / 2; ++j) y[b].qs[j] = static_cast<uint8_t>(L[j] | L[j + kQK / 2] << 4);
  }
}

// IQ4_XS: the best table scale of each 32 elements, then the super-block scale d
// that puts the largest of them at -32, and each 6-bit sub-scale chosen among its
// rounding and its neighbours by the error it gives.
void quantize_row_iq4_xs(const float* x, BlockIQ4_XS* y, int64_t n) {
  constexpr int kSub = kQK_K / kQK;
  uint8_t L[kQK], bestL[kQK];
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float* xb = x + b * kQK_K;
    float scales[kSub];
    float smax = 0;
    for (int s = 0; s < kSub; ++s) {
      scales[s] = quant_fit::fit_nonlinear(xb + s * kQK, kQK, L);
      if (std::fabs(scales[s]) > std::fabs(smax)) smax = scales[s];
    }
    BlockIQ4_XS& out = y[b];
    out = BlockIQ4_XS{};
    out.d = fp32_to_fp16(smax / -32.0f);
    const float d = fp16_to_fp32(out.d);
    for (int s = 0; s < kSub; ++s) {
      const float* xs = xb + s * kQK;
      const int ls0 = d != 0 ? quant_fit::nearest_clamped(scales[s] / d, -32, 31) : 0;
      int best_ls = ls0;
      float best_err = quant_fit::nonlinear_error(xs, kQK, d * ls0, bestL);
      for (int ls = std::max(-32, ls0 - 2); ls <= std::min(31, ls0 + 2); ++ls) {
        const float err = quant_fit::nonlinear_error(xs, kQK, d * ls, L);
        if (err < best_err) {
          best_err = err;
          best_ls = ls;
          std::copy(L, L + kQK, bestL);
        }
      }
      const int v = best_ls + 32;
      out.scales_l[s / 2] |= static_cast<uint8_t>((v & 0x0f) << (4 * (s % 2)));
      out.scales_h |= static_cast<uint16_t>((v >> 4) << (2 * s));
      for (int j = 0; j < kQK / 2; ++j) out.qs[s * kQK / 2 + j] = static_cast<uint8_t>(bestL[j] | bestL[j + kQK / 2] << 4);
    }
  }
}

}  // namespace seer
