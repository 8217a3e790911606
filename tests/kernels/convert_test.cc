// f32 -> f16 rows (kernels/convert.h): the vector path gives the scalar converter's
// bits, ties to even, subnormals and overflow included.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/convert.h"
#include "model/quant.h"

namespace seer {
namespace {

float from_bits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

TEST(F32ToF16Row, GivesTheScalarConvertersBitsForEveryKindOfValue) {
  std::vector<float> x;
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int e = -30; e <= 17; ++e)  // subnormal f16 range up to overflow
    for (int i = 0; i < 24; ++i) x.push_back((i % 2 ? -1 : 1) * std::ldexp(mant(rng), e));
  for (uint32_t h = 0; h < 0x7c00; h += 97) {  // exact halfway points between neighbouring f16 values
    const float a = fp16_to_fp32(static_cast<uint16_t>(h)), b = fp16_to_fp32(static_cast<uint16_t>(h + 1));
    x.push_back((a + b) / 2);
  }
  for (float v : {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 1e9f, -1e9f, 5.96e-8f, 2.98e-8f, 2.99e-8f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  from_bits(0x00000001), from_bits(0x387fffff)})
    x.push_back(v);
  x.push_back(1.0f);  // a length that leaves a scalar tail
  std::vector<uint16_t> y(x.size());
  f32_to_f16_row(x.data(), y.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i)
    ASSERT_EQ(y[i], fp32_to_fp16(x[i])) << "x[" << i << "] = " << x[i];
}

TEST(F32ToF16Row, RoundTripsThroughF16ToF32) {
  std::vector<uint16_t> h;
  for (uint32_t b = 0; b < 0x7c00; b += 13) h.push_back(static_cast<uint16_t>(b | (b % 2 ? 0x8000 : 0)));
  std::vector<float> f(h.size());
  f16_to_f32_row(h.data(), f.data(), static_cast<int64_t>(h.size()));
  std::vector<uint16_t> back(h.size());
  f32_to_f16_row(f.data(), back.data(), static_cast<int64_t>(f.size()));
  EXPECT_EQ(back, h);
}

}  // namespace
}  // namespace seer
