#pragma once
// The packed sub-block scales of the super-block formats, unpacked to integers.
// Shared by the scalar reference and the SIMD kernels (one reading of each format).
#include <cstdint>

#include "model/quant_blocks.h"

namespace seer {

// Q4_K / Q5_K: 8 scales and 8 minimums of 6 bits in 12 bytes. Sub-blocks 0-3 keep
// theirs in the low 6 bits of bytes j and j + 4; sub-blocks 4-7 in the nibbles of
// byte j + 4 with the top 2 bits taken from bytes j - 4 (scale) and j (minimum).
inline void k4_scale_min(const uint8_t* s, int j, int& scale, int& min) {
  if (j < 4) {
    scale = s[j] & 63;
    min = s[j + 4] & 63;
  } else {
    scale = (s[j + 4] & 0x0f) | ((s[j - 4] >> 6) << 4);
    min = (s[j + 4] >> 4) | ((s[j] >> 6) << 4);
  }
}

// Q3_K: 16 scales of 6 bits, stored with an offset of 32. Low 4 bits: nibbles of bytes
// 0-7 (sub-blocks 0-7 low nibbles, 8-15 high nibbles); high 2 bits: bytes 8-11, bit
// pair j / 4 of byte 8 + j % 4.
inline int q3k_scale(const uint8_t* s, int j) {
  const int low = j < 8 ? (s[j] & 0x0f) : (s[j - 8] >> 4);
  const int high = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return (low | (high << 4)) - 32;
}

// IQ4_XS: 8 scales of 6 bits with an offset of 32: low 4 bits in scales_l nibbles,
// high 2 bits in scales_h.
inline int iq4xs_scale(const BlockIQ4_XS& b, int j) {
  const int low = (b.scales_l[j / 2] >> (4 * (j % 2))) & 0x0f;
  const int high = (b.scales_h >> (2 * j)) & 3;
  return (low | (high << 4)) - 32;
}

}  // namespace seer
