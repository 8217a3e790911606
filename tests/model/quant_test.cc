#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "model/quant.h"

namespace seer {
namespace {

std::vector<float> random_values(size_t n, float scale, uint32_t seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

TEST(Quant, Fp16KnownValuesAndRoundTrip) {
  EXPECT_EQ(fp32_to_fp16(1.0f), 0x3C00);
  EXPECT_EQ(fp32_to_fp16(-2.0f), 0xC000);
  EXPECT_EQ(fp32_to_fp16(65504.0f), 0x7BFF);
  EXPECT_EQ(fp32_to_fp16(1e6f), 0x7C00);          // overflow -> inf
  EXPECT_EQ(fp32_to_fp16(5.960464477539063e-8f), 0x0001);  // smallest subnormal
  EXPECT_EQ(fp32_to_fp16(1.0f + 1.0f / 2048), 0x3C00);   // halfway: ties to even
  EXPECT_EQ(fp32_to_fp16(1.0f + 3.0f / 2048), 0x3C02);
  EXPECT_TRUE(std::isnan(fp16_to_fp32(fp32_to_fp16(NAN))));
  EXPECT_EQ(fp16_to_fp32(0x3555), 0.333251953125f);
  // Every finite fp16 survives fp16 -> fp32 -> fp16.
  for (uint32_t h = 0; h < 0x10000; ++h) {
    if ((h & 0x7C00) == 0x7C00) continue;
    ASSERT_EQ(fp32_to_fp16(fp16_to_fp32(static_cast<uint16_t>(h))), h) << h;
  }
  for (float x : random_values(4096, 3.0f, 1)) {
    float y = fp16_to_fp32(fp32_to_fp16(x));
    EXPECT_LE(std::fabs(x - y), std::fabs(x) * (1.0f / 2048) + 1e-7f);
  }
}

TEST(Quant, Bf16RoundTrip) {
  EXPECT_EQ(fp32_to_bf16(1.0f), 0x3F80);
  EXPECT_EQ(bf16_to_fp32(0xC040), -3.0f);
  EXPECT_TRUE(std::isnan(bf16_to_fp32(fp32_to_bf16(NAN))));
  for (float x : random_values(4096, 100.0f, 2)) {
    float y = bf16_to_fp32(fp32_to_bf16(x));
    EXPECT_LE(std::fabs(x - y), std::fabs(x) * (1.0f / 256));  // 8 significant bits, rounded
  }
}

TEST(Quant, Q8_0ErrorBound) {
  const int64_t n = 32 * 64;
  std::vector<float> x = random_values(n, 1.0f, 3), y(n);
  std::vector<BlockQ8_0> q(n / kQK);
  quantize_row_q8_0(x.data(), q.data(), n);
  dequantize_row_q8_0(q.data(), y.data(), n);
  for (int64_t b = 0; b < n / kQK; ++b) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[b * kQK + j]));
    // Half a quantization step, plus the fp16 rounding of the scale applied to 127 steps.
    float bound = amax / 127 * 0.5f + amax * (1.0f / 1024);
    for (int j = 0; j < kQK; ++j) EXPECT_LE(std::fabs(x[b * kQK + j] - y[b * kQK + j]), bound);
  }
}

TEST(Quant, Q4_0ErrorBound) {
  const int64_t n = 32 * 64;
  std::vector<float> x = random_values(n, 1.0f, 4), y(n);
  std::vector<BlockQ4_0> q(n / kQK);
  quantize_row_q4_0(x.data(), q.data(), n);
  dequantize_row_q4_0(q.data(), y.data(), n);
  for (int64_t b = 0; b < n / kQK; ++b) {
    float amax = 0;
    for (int j = 0; j < kQK; ++j) amax = std::max(amax, std::fabs(x[b * kQK + j]));
    float step = amax / 8;
    for (int j = 0; j < kQK; ++j) {
      // Values opposite in sign to the largest one and beyond 7.5 steps are clamped to
      // 7 steps (the code range is -8..7), so they may be off by a whole step.
      float steps = std::fabs(x[b * kQK + j]) / step;
      bool clamped = steps > 7.5f && x[b * kQK + j] * y[b * kQK + j] > 0 && std::fabs(y[b * kQK + j]) < amax * 0.9f;
      float bound = (clamped ? step : step * 0.5f) + amax * (1.0f / 512);
      EXPECT_LE(std::fabs(x[b * kQK + j] - y[b * kQK + j]), bound) << b << " " << j;
    }
  }
}

// The layouts must match llama.cpp's: Q8_0 is {fp16 d, 32 x int8}; Q4_0 is {fp16 d,
// 16 bytes} with element j in the low nibble of byte j and element j+16 in the high
// nibble, stored as q + 8 with d = (signed max) / -8.
TEST(Quant, BlockLayoutsMatchGgml) {
  float x[32];
  for (int j = 0; j < 32; ++j) x[j] = static_cast<float>(j - 16);  // -16..15, max |x| is -16
  BlockQ4_0 q4;
  quantize_row_q4_0(x, &q4, 32);
  EXPECT_EQ(fp16_to_fp32(q4.d), 2.0f);  // -16 / -8
  // x/d = (j-16)/2: element 0 -> -8 -> nibble 0; element 16 -> 0 -> nibble 8.
  EXPECT_EQ(q4.qs[0], 0x80);
  // element 1 -> -7.5 -> round(-7.5 + 8.5) truncated = 1; element 17 -> 0.5 -> 9.
  EXPECT_EQ(q4.qs[1], 0x91);
  // element 15: -0.5 -> 8; element 31: 7.5 -> 16, clamped to 15.
  EXPECT_EQ(q4.qs[15], 0xF8);
  const uint8_t* raw = reinterpret_cast<const uint8_t*>(&q4);
  EXPECT_EQ(raw[2], q4.qs[0]);  // qs directly after the 2-byte scale, no padding

  float z[32];
  for (int j = 0; j < 32; ++j) z[j] = j < 16 ? 1.0f : -1.0f;
  quantize_row_q4_0(z, &q4, 32);
  // max is the first +1 -> d = -1/8; +1 -> -8 -> nibble 0; -1 -> +8, clamped to nibble 15.
  for (int j = 0; j < 16; ++j) EXPECT_EQ(q4.qs[j], 0xF0) << j;
  float back[32];
  dequantize_row_q4_0(&q4, back, 32);
  EXPECT_EQ(back[0], 1.0f);
  EXPECT_EQ(back[16], -0.875f);  // (15 - 8) * -1/8: the one value Q4_0 cannot reach

  BlockQ8_0 q8;
  quantize_row_q8_0(x, &q8, 32);
  EXPECT_EQ(fp16_to_fp32(q8.d), fp16_to_fp32(fp32_to_fp16(16.0f / 127)));
  EXPECT_EQ(q8.qs[0], -127);
  EXPECT_EQ(q8.qs[16], 0);
  EXPECT_EQ(reinterpret_cast<const uint8_t*>(&q8)[2], static_cast<uint8_t>(q8.qs[0]));
}

TEST(Quant, GenericRowDispatch) {
  const int64_t n = 64;
  std::vector<float> x = random_values(n, 1.0f, 5);
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    std::vector<uint8_t> buf(ggml_row_bytes(t, n));
    std::vector<float> y(n);
    quantize_row(t, x.data(), buf.data(), n);
    dequantize_row(t, buf.data(), y.data(), n);
    for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(x[i], y[i], 0.35f) << ggml_type_name(t);
    if (t == GgmlType::F32) {
      EXPECT_EQ(x, y);
    }
  }
  std::vector<uint8_t> buf(1024);
  EXPECT_THROW(quantize_row(GgmlType::Q8_1, x.data(), buf.data(), n), Error);  // activations only
}

}  // namespace
}  // namespace seer
