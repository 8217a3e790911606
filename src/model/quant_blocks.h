#pragma once
// Byte layouts of the GGML block-quantized types, as GGUF files store them. Each
// block holds a fixed number of consecutive elements of one row (32, or kQK_K for
// the K-quants and IQ4_XS); fp16 values are stored as raw uint16_t bits.
//
// Element order inside a block is the format's, not the storage order: the
// (de)quantizers in model/quant*.cc are the reference for what each byte means,
// and the dot kernels in kernels/ are tested against them.
#include <cstdint>

namespace seer {

constexpr int kQK = 32;       // elements per block of the 32-element formats
constexpr int kQK_K = 256;    // elements per super-block of the K-quants and IQ4_XS
constexpr int kKScaleBytes = 12;  // packed 6-bit scales and mins of Q3_K/Q4_K/Q5_K

// ---- 32-element formats ----------------------------------------------------

struct BlockQ8_0 {
  uint16_t d;  // fp16 scale
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;            // fp16 scale
  uint8_t qs[kQK / 2];   // element j in low nibble of qs[j], element j+16 in the high nibble
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_1 {
  uint16_t d, m;  // fp16 scale and minimum: x = d * q + m
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
  uint16_t d;
  uint8_t qh[4];  // fifth bit of each element, bit j for element j
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d, m;
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

struct BlockQ8_1 {
  uint16_t d, s;  // scale and d * sum(qs)
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_1) == 36);

struct BlockIQ4_NL {
  uint16_t d;
  uint8_t qs[kQK / 2];  // indices into the non-linear 16-value table
};
static_assert(sizeof(BlockIQ4_NL) == 18);

// ---- 256-element super-blocks ------------------------------------------------

struct BlockQ2_K {
  uint8_t scales[kQK_K / 16];  // per 16 elements: scale in the low nibble, min in the high
  uint8_t qs[kQK_K / 4];       // 2-bit quants
  uint16_t d, dmin;            // super-block scale for scales and for mins
};
static_assert(sizeof(BlockQ2_K) == 84);

struct BlockQ3_K {
  uint8_t hmask[kQK_K / 8];      // high bit of each quant
  uint8_t qs[kQK_K / 4];         // low 2 bits
  uint8_t scales[kKScaleBytes];  // 16 scales of 6 bits
  uint16_t d;
};
static_assert(sizeof(BlockQ3_K) == 110);

struct BlockQ4_K {
  uint16_t d, dmin;
  uint8_t scales[kKScaleBytes];  // 8 scales and 8 mins of 6 bits
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d, dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQK_K / 8];
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

struct BlockQ6_K {
  uint8_t ql[kQK_K / 2];      // low 4 bits
  uint8_t qh[kQK_K / 4];      // high 2 bits
  int8_t scales[kQK_K / 16];  // 8-bit scales per 16 elements
  uint16_t d;
};
static_assert(sizeof(BlockQ6_K) == 210);

// Activations for the K-quant dot products: f32 scale, 8-bit quants and the sums
// of each 16 quants (for the formats with a minimum).
struct BlockQ8_K {
  float d;
  int8_t qs[kQK_K];
  int16_t bsums[kQK_K / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

struct BlockIQ4_XS {
  uint16_t d;
  uint16_t scales_h;           // high 2 bits of the eight 6-bit scales
  uint8_t scales_l[kQK_K / 64];  // low 4 bits, two per byte
  uint8_t qs[kQK_K / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

// The 16 values IQ4_NL and IQ4_XS indices select (GGML's kvalues_iq4nl).
inline constexpr int8_t kIQ4NLValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                            1,    13,   25,  38,  53,  69,  89,  113};

}  // namespace seer
