// Dequantization of the K-quants: 256-element super-blocks whose sub-blocks (16 or
// 32 elements) carry small integer scales (and minimums) relative to one or two
// fp16 super-block scales. The element order inside a super-block is described at
// each function.
#include "model/quant.h"

namespace seer {

KScaleMin k_scale_min(const uint8_t* q, int j) {
  if (j < 4) return {static_cast<uint8_t>(q[j] & 63), static_cast<uint8_t>(q[j + 4] & 63)};
  return {static_cast<uint8_t>((q[j + 4] & 0x0f) | (q[j - 4] >> 6) << 4),
          static_cast<uint8_t>((q[j + 4] >> 4) | (q[j] >> 6) << 4)};
}

int q3_k_scale(const uint8_t* scales, int j) {
  const int lo = j < 8 ? scales[j] & 0x0f : scales[j - 8] >> 4;
  const int hi = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (lo | hi << 4) - 32;
}

// Element e of a Q2_K super-block: half h = e / 128 uses qs[32h .. 32h+31]; within
// it, bits 2s..2s+1 of byte l hold element 32s + l. Sub-block (scale) e / 16:
// scale in the low nibble of scales[], minimum in the high one.
void dequantize_row_q2_k(const BlockQ2_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
    for (int e = 0; e < kQK_K; e += 16, y += 16) {
      const uint8_t sc = x[b].scales[e / 16];
      const float dl = d * (sc & 0x0f), ml = dmin * (sc >> 4);
      const uint8_t* q = x[b].qs + 32 * (e / 128) + e % 32;
      const int shift = 2 * ((e % 128) / 32);
      for (int l = 0; l < 16; ++l) y[l] = dl * ((q[l] >> shift) & 3) - ml;
    }
  }
}

// Q3_K: the low two bits are laid out as in Q2_K; the third bit of element e is bit
// (e / 32) of hmask[e % 32], and a clear bit subtracts 4. Sub-block scale e / 16.
void dequantize_row_q3_k(const BlockQ3_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int e = 0; e < kQK_K; e += 16, y += 16) {
      const float dl = d * q3_k_scale(x[b].scales, e / 16);
      const uint8_t* q = x[b].qs + 32 * (e / 128) + e % 32;
      const uint8_t* hm = x[b].hmask + e % 32;
      const int shift = 2 * ((e % 128) / 32);
      const uint8_t bit = static_cast<uint8_t>(1u << (e / 32));
      for (int l = 0; l < 16; ++l) y[l] = dl * (((q[l] >> shift) & 3) - ((hm[l] & bit) ? 0 : 4));
    }
  }
}

// Q4_K: chunk c = e / 64 uses qs[32c .. 32c+31], low nibbles for its first 32
// elements (sub-block 2c), high nibbles for the next 32 (sub-block 2c+1).
void dequantize_row_q4_k(const BlockQ4_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
    for (int s = 0; s < kQK_K / 32; ++s, y += 32) {
      const KScaleMin sm = k_scale_min(x[b].scales, s);
      const float dl = d * sm.scale, ml = dmin * sm.min;
      const uint8_t* q = x[b].qs + 32 * (s / 2);
      const int shift = 4 * (s % 2);
      for (int l = 0; l < 32; ++l) y[l] = dl * ((q[l] >> shift) & 0x0f) - ml;
    }
  }
}

// Q5_K: Q4_K's nibbles plus a fifth bit, bit s of qh[l] for element 32s + l.
void dequantize_row_q5_k(const BlockQ5_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d), dmin = fp16_to_fp32(x[b].dmin);
    for (int s = 0; s < kQK_K / 32; ++s, y += 32) {
      const KScaleMin sm = k_scale_min(x[b].scales, s);
      const float dl = d * sm.scale, ml = dmin * sm.min;
      const uint8_t* q = x[b].qs + 32 * (s / 2);
      const int shift = 4 * (s % 2);
      for (int l = 0; l < 32; ++l) {
        const int v = ((q[l] >> shift) & 0x0f) | ((x[b].qh[l] >> s) & 1) << 4;
        y[l] = dl * v - ml;
      }
    }
  }
}

// Q6_K: half h = e / 128 uses ql[64h ..], qh[32h ..]. Within a half, quarter t =
// (e % 128) / 32 and l = e % 32: the low four bits are the low (t < 2) or high
// nibble of ql[l + 32 (t % 2)], the top two bits are bits 2t..2t+1 of qh[l].
// Signed 8-bit scale per 16 elements (e / 16), values offset by 32.
void dequantize_row_q6_k(const BlockQ6_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b) {
    const float d = fp16_to_fp32(x[b].d);
    for (int e = 0; e < kQK_K; e += 16, y += 16) {
      const int half = e / 128, t = (e % 128) / 32, l0 = e % 32;
      const uint8_t* ql = x[b].ql + 64 * half + 32 * (t % 2) + l0;
      const uint8_t* qh = x[b].qh + 32 * half + l0;
      const int lo_shift = 4 * (t / 2), hi_shift = 2 * t;
      const float dl = d * x[b].scales[e / 16];
      for (int l = 0; l < 16; ++l) {
        const int v = ((ql[l] >> lo_shift) & 0x0f) | ((qh[l] >> hi_shift) & 3) << 4;
        y[l] = dl * (v - 32);
      }
    }
  }
}

void dequantize_row_q8_k(const BlockQ8_K* x, float* y, int64_t n) {
  for (int64_t b = 0; b < n / kQK_K; ++b, y += kQK_K)
    for (int j = 0; j < kQK_K; ++j) y[j] = x[b].d * x[b].qs[j];
}

}  // namespace seer
