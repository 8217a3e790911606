// Scalar dot kernels of every quantized weight type: the semantic definition the
// SIMD kernels are tested against, and the kernels of machines without AVX2. Each
// block is decoded to integers straight from the format (weight = d * w + m for the
// 32-element types, d * sc * w - dmin * mn per 16 elements for the super-blocks),
// summed against the int8 activations with integer arithmetic inside a block, and
// scaled in f32 once per block. The packed sub-block scales are read by model/quant.h's
// k_scale_min / q3_k_scale / iq4_xs_scale, the dequantizers' own readers.
#include <cstring>

#include "kernels/qdot.h"
#include "model/quant.h"

namespace seer {
namespace {

struct IntBlock32 {
  int w[kQK];
  float d = 0, m = 0;  // element = d * w + m
};

int nibble(const uint8_t* qs, int j) { return j < kQK / 2 ? (qs[j] & 0x0f) : (qs[j - kQK / 2] >> 4); }
int high_bit(const uint8_t* qh, int j) {
  uint32_t bits;
  std::memcpy(&bits, qh, 4);
  return (bits >> j) & 1;
}

IntBlock32 decode(const BlockQ8_0& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK; ++j) r.w[j] = b.qs[j];
  return r;
}
IntBlock32 decode(const BlockQ4_0& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK; ++j) r.w[j] = nibble(b.qs, j) - 8;
  return r;
}
IntBlock32 decode(const BlockQ4_1& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  r.m = fp16_to_fp32(b.m);
  for (int j = 0; j < kQK; ++j) r.w[j] = nibble(b.qs, j);
  return r;
}
IntBlock32 decode(const BlockQ5_0& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK; ++j) r.w[j] = (nibble(b.qs, j) | (high_bit(b.qh, j) << 4)) - 16;
  return r;
}
IntBlock32 decode(const BlockQ5_1& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  r.m = fp16_to_fp32(b.m);
  for (int j = 0; j < kQK; ++j) r.w[j] = nibble(b.qs, j) | (high_bit(b.qh, j) << 4);
  return r;
}
IntBlock32 decode(const BlockIQ4_NL& b) {
  IntBlock32 r;
  r.d = fp16_to_fp32(b.d);
  for (int j = 0; j < kQK; ++j) r.w[j] = kIQ4NLValues[nibble(b.qs, j)];
  return r;
}

template <class Block>
void tile32(const void* wv, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* w = static_cast<const Block*>(wv);
  for (int c = 0; c < nc; ++c) out[c] = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const IntBlock32 ib = decode(w[b]);
    for (int c = 0; c < nc; ++c) {
      const int8_t* q = x.q[c] + b * kQK;
      int32_t dot = 0, sum = 0;
      for (int j = 0; j < kQK; ++j) {
        dot += ib.w[j] * q[j];
        sum += q[j];
      }
      const float dx = x.d[c][b];
      out[c] += ib.d * dx * static_cast<float>(dot) + ib.m * (dx * static_cast<float>(sum));
    }
  }
}

struct IntSuperBlock {
  int w[kQK_K];
  int sc[kQK_K / 16];
  int mn[kQK_K / 16] = {};
  float d = 0, dmin = 0;  // element i = d * sc[i/16] * w[i] - dmin * mn[i/16]
};

IntSuperBlock decode(const BlockQ2_K& b) {
  IntSuperBlock r;
  r.d = fp16_to_fp32(b.d);
  r.dmin = fp16_to_fp32(b.dmin);
  for (int e = 0; e < kQK_K; ++e) {
    const int g = e / 32, l = e % 32, half = g / 4, shift = 2 * (g % 4);
    r.w[e] = (b.qs[32 * half + l] >> shift) & 3;
  }
  for (int j = 0; j < kQK_K / 16; ++j) {
    r.sc[j] = b.scales[j] & 0x0f;
    r.mn[j] = b.scales[j] >> 4;
  }
  return r;
}
IntSuperBlock decode(const BlockQ3_K& b) {
  IntSuperBlock r;
  r.d = fp16_to_fp32(b.d);
  for (int e = 0; e < kQK_K; ++e) {
    const int g = e / 32, l = e % 32, half = g / 4, shift = 2 * (g % 4);
    const int low = (b.qs[32 * half + l] >> shift) & 3;
    const int high = (b.hmask[l] >> g) & 1;
    r.w[e] = low + 4 * high - 4;
  }
  for (int j = 0; j < kQK_K / 16; ++j) r.sc[j] = q3_k_scale(b.scales, j);
  return r;
}
template <class Block>
IntSuperBlock decode_k4(const Block& b, const uint8_t* qh) {
  IntSuperBlock r;
  r.d = fp16_to_fp32(b.d);
  r.dmin = fp16_to_fp32(b.dmin);
  for (int e = 0; e < kQK_K; ++e) {
    const int g = e / 32, l = e % 32;
    const int nib = (b.qs[32 * (g / 2) + l] >> (4 * (g % 2))) & 0x0f;
    r.w[e] = nib | (qh ? ((qh[l] >> g) & 1) << 4 : 0);
  }
  for (int g = 0; g < 8; ++g) {
    const KScaleMin sm = k_scale_min(b.scales, g);
    r.sc[2 * g] = r.sc[2 * g + 1] = sm.scale;
    r.mn[2 * g] = r.mn[2 * g + 1] = sm.min;
  }
  return r;
}
IntSuperBlock decode(const BlockQ4_K& b) { return decode_k4(b, nullptr); }
IntSuperBlock decode(const BlockQ5_K& b) { return decode_k4(b, b.qh); }
IntSuperBlock decode(const BlockQ6_K& b) {
  IntSuperBlock r;
  r.d = fp16_to_fp32(b.d);
  for (int e = 0; e < kQK_K; ++e) {
    const int half = e / 128, j = (e % 128) / 32, l = e % 32;
    const int low = (b.ql[64 * half + 32 * (j % 2) + l] >> (4 * (j / 2))) & 0x0f;
    const int high = (b.qh[32 * half + l] >> (2 * j)) & 3;
    r.w[e] = (low | (high << 4)) - 32;
  }
  for (int j = 0; j < kQK_K / 16; ++j) r.sc[j] = b.scales[j];
  return r;
}
IntSuperBlock decode(const BlockIQ4_XS& b) {
  IntSuperBlock r;
  r.d = fp16_to_fp32(b.d);
  for (int e = 0; e < kQK_K; ++e) {
    const int g = e / 32, l = e % 32;
    r.w[e] = kIQ4NLValues[nibble(b.qs + 16 * g, l)];
  }
  for (int g = 0; g < 8; ++g) r.sc[2 * g] = r.sc[2 * g + 1] = iq4_xs_scale(b, g);
  return r;
}

template <class Block>
void tile256(const void* wv, int64_t nb, const QActCols& x, int nc, float* out) {
  const auto* w = static_cast<const Block*>(wv);
  for (int c = 0; c < nc; ++c) out[c] = 0.0f;
  for (int64_t b = 0; b < nb; ++b) {
    const IntSuperBlock ib = decode(w[b]);
    for (int c = 0; c < nc; ++c) {
      const BlockQ8_K& a = x.k[c][b];
      int32_t dot = 0, mins = 0;
      for (int j = 0; j < kQK_K / 16; ++j) {
        int32_t sub = 0, sum = 0;
        for (int i = 16 * j; i < 16 * j + 16; ++i) {
          sub += ib.w[i] * a.qs[i];
          sum += a.qs[i];
        }
        dot += ib.sc[j] * sub;
        mins += ib.mn[j] * sum;
      }
      out[c] += ib.d * a.d * static_cast<float>(dot) - ib.dmin * a.d * static_cast<float>(mins);
    }
  }
}

template <class Block>
constexpr QDotKernel k32{&tile32<Block>, ActKind::Q8, kQK, sizeof(Block)};
template <class Block>
constexpr QDotKernel k256{&tile256<Block>, ActKind::Q8K, kQK_K, sizeof(Block)};

}  // namespace

const QDotKernel* qdot_kernel_scalar(GgmlType t) {
  switch (t) {
    case GgmlType::Q8_0: return &k32<BlockQ8_0>;
    case GgmlType::Q4_0: return &k32<BlockQ4_0>;
    case GgmlType::Q4_1: return &k32<BlockQ4_1>;
    case GgmlType::Q5_0: return &k32<BlockQ5_0>;
    case GgmlType::Q5_1: return &k32<BlockQ5_1>;
    case GgmlType::IQ4_NL: return &k32<BlockIQ4_NL>;
    case GgmlType::Q2_K: return &k256<BlockQ2_K>;
    case GgmlType::Q3_K: return &k256<BlockQ3_K>;
    case GgmlType::Q4_K: return &k256<BlockQ4_K>;
    case GgmlType::Q5_K: return &k256<BlockQ5_K>;
    case GgmlType::Q6_K: return &k256<BlockQ6_K>;
    case GgmlType::IQ4_XS: return &k256<BlockIQ4_XS>;
    default: return nullptr;
  }
}

}  // namespace seer
