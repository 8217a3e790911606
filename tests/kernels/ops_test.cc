// Element-wise kernels against naive formulas (tolerances in each test).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "kernels/convert.h"
#include "kernels/ops.h"
#include "kernels/quantize_act.h"
#include "model/quant.h"

namespace seer {
namespace {

std::vector<float> randn(size_t n, uint32_t seed, float scale = 1.0f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> d(0.0f, scale);
  std::vector<float> v(n);
  for (auto& x : v) x = d(rng);
  return v;
}

TEST(Ops, RmsNormMatchesFormula) {
  const int64_t d = 77, n = 3;
  auto x = randn(n * d, 1), w = randn(d, 2);
  std::vector<float> y(n * d);
  rmsnorm(x.data(), w.data(), y.data(), n, d, 1e-5f);
  for (int64_t r = 0; r < n; ++r) {
    double ss = 0;
    for (int64_t i = 0; i < d; ++i) ss += double(x[r * d + i]) * x[r * d + i];
    const double s = 1.0 / std::sqrt(ss / d + 1e-5);
    for (int64_t i = 0; i < d; ++i) EXPECT_NEAR(y[r * d + i], x[r * d + i] * s * w[i], 1e-5);
  }
}

TEST(Ops, SiluMulMatchesFormula) {
  auto g = randn(101, 3, 4.0f), u = randn(101, 4);
  g[0] = -100.0f;  // exp overflow side
  g[1] = 100.0f;
  std::vector<float> h(101);
  silu_mul(g.data(), u.data(), h.data(), 101);
  for (int i = 0; i < 101; ++i) {
    const double ref = g[i] / (1.0 + std::exp(-double(g[i]))) * u[i];
    EXPECT_NEAR(h[i], ref, 1e-6 * (1 + std::fabs(ref))) << i;
  }
}

TEST(Ops, VectorExpIsAccurate) {
  // Relative error <= 1e-6 over the whole useful range, 0 below e^-87.3.
  std::vector<float> x;
  for (float v = -87.0f; v <= 88.0f; v += 0.173f) x.push_back(v);
  std::vector<float> e = x;
  exp_shifted_inplace(e.data(), static_cast<int64_t>(e.size()), 0.0f);
  for (size_t i = 0; i < x.size(); ++i) {
    const double ref = std::exp(double(x[i]));
    EXPECT_NEAR(e[i] / ref, 1.0, 1e-6) << x[i];
  }
  std::vector<float> tiny(32, -200.0f);
  exp_shifted_inplace(tiny.data(), 32, 0.0f);
  for (float v : tiny) EXPECT_EQ(v, 0.0f);
}

TEST(Ops, SoftmaxSumsToOneAndMatches) {
  auto x = randn(300, 5, 3.0f);
  auto y = x;
  softmax_inplace(y.data(), 300);
  double mx = *std::max_element(x.begin(), x.end()), sum = 0;
  for (float v : x) sum += std::exp(v - mx);
  double total = 0;
  for (int i = 0; i < 300; ++i) {
    EXPECT_NEAR(y[i], std::exp(x[i] - mx) / sum, 1e-7);
    total += y[i];
  }
  EXPECT_NEAR(total, 1.0, 1e-5);
}

TEST(Ops, RopeAdjacentAndNeoxPairs) {
  const int hd = 16, heads = 2;
  const double base = 10000.0;
  auto x = randn(hd * heads, 6);
  for (bool neox : {false, true}) {
    Rope rope(hd, base, neox);
    for (int32_t pos : {0, 1, 17, 1000}) {
      std::vector<float> c(hd / 2), s(hd / 2);
      rope.angles(pos, c.data(), s.data());
      auto y = x;
      rope.apply(y.data(), heads, c.data(), s.data());
      for (int h = 0; h < heads; ++h)
        for (int i = 0; i < hd / 2; ++i) {
          const double theta = pos * std::pow(base, -2.0 * i / hd);
          const int a = neox ? i : 2 * i, b = neox ? i + hd / 2 : 2 * i + 1;
          const double xa = x[h * hd + a], xb = x[h * hd + b];
          EXPECT_NEAR(y[h * hd + a], xa * std::cos(theta) - xb * std::sin(theta), 1e-5);
          EXPECT_NEAR(y[h * hd + b], xa * std::sin(theta) + xb * std::cos(theta), 1e-5);
        }
    }
  }
}

TEST(Ops, RopeLinearScalingDividesPositions) {
  Rope scaled(8, 10000.0, false, 4.0), plain(8, 10000.0, false);
  std::vector<float> c1(4), s1(4), c2(4), s2(4);
  scaled.angles(40, c1.data(), s1.data());
  plain.angles(10, c2.data(), s2.data());
  EXPECT_EQ(c1, c2);
  EXPECT_EQ(s1, s2);
}

TEST(Ops, ConversionsMatchScalarFormats) {
  auto x = randn(96, 8);
  std::vector<uint16_t> h(96), b(96);
  for (int i = 0; i < 96; ++i) {
    h[i] = fp32_to_fp16(x[i]);
    b[i] = fp32_to_bf16(x[i]);
  }
  std::vector<float> y(96);
  to_f32_row(GgmlType::F16, h.data(), y.data(), 96);
  for (int i = 0; i < 96; ++i) EXPECT_EQ(y[i], fp16_to_fp32(h[i]));
  to_f32_row(GgmlType::BF16, b.data(), y.data(), 96);
  for (int i = 0; i < 96; ++i) EXPECT_EQ(y[i], bf16_to_fp32(b[i]));
  std::vector<BlockQ8_0> q8(3);
  std::vector<BlockQ4_0> q4(3);
  quantize_row_q8_0(x.data(), q8.data(), 96);
  quantize_row_q4_0(x.data(), q4.data(), 96);
  std::vector<float> ref(96);
  dequantize_row_q8_0(q8.data(), ref.data(), 96);
  to_f32_row(GgmlType::Q8_0, q8.data(), y.data(), 96);
  EXPECT_EQ(y, ref);
  dequantize_row_q4_0(q4.data(), ref.data(), 96);
  to_f32_row(GgmlType::Q4_0, q4.data(), y.data(), 96);
  EXPECT_EQ(y, ref);
  // The other block types go through the format's dequantizer; a type without one throws.
  std::vector<uint8_t> q4k(ggml_row_bytes(GgmlType::Q4_K, 256));
  std::vector<float> x256(256), y256(256), ref256(256);
  for (int i = 0; i < 256; ++i) x256[i] = std::sin(0.37f * i);
  quantize_row(GgmlType::Q4_K, x256.data(), q4k.data(), 256);
  dequantize_row(GgmlType::Q4_K, q4k.data(), ref256.data(), 256);
  to_f32_row(GgmlType::Q4_K, q4k.data(), y256.data(), 256);
  EXPECT_EQ(y256, ref256);
  EXPECT_THROW(to_f32_row(GgmlType::I32, q4.data(), y.data(), 24), Error);
}

TEST(Ops, ActivationQuantizationRoundsToNearestEven) {
  auto x = randn(128, 9, 5.0f);
  x[3] = 0.0f;
  std::fill(x.begin() + 64, x.begin() + 96, 0.0f);  // an all-zero block
  std::vector<int8_t> q(128);
  std::vector<float> d(4);
  quantize_act_q8(x.data(), 128, q.data(), d.data());
  for (int b = 0; b < 4; ++b) {
    float amax = 0;
    for (int j = 0; j < 32; ++j) amax = std::max(amax, std::fabs(x[b * 32 + j]));
    EXPECT_EQ(d[b], amax / 127.0f);
    const float id = d[b] != 0 ? 1.0f / d[b] : 0.0f;
    for (int j = 0; j < 32; ++j) EXPECT_EQ(q[b * 32 + j], static_cast<int8_t>(std::nearbyint(x[b * 32 + j] * id)));
  }
  std::vector<float> back(128);
  dequantize_act_q8(q.data(), d.data(), 128, back.data());
  for (int i = 0; i < 128; ++i) EXPECT_NEAR(back[i], x[i], d[i / 32] * 0.5f + 1e-7f);
}

TEST(Ops, EmbeddingRejectsOutOfRangeIds) {
  std::vector<float> table(4 * 8, 1.0f);
  WeightTensor t{"token_embd.weight", GgmlType::F32, 4, 8, table.data(), table.size() * 4};
  std::vector<float> out(8);
  const int32_t bad = 4, good = 3;
  EXPECT_THROW(embed_rows(t, &bad, 1, out.data()), Error);
  embed_rows(t, &good, 1, out.data());
  EXPECT_EQ(out[0], 1.0f);
}

}  // namespace
}  // namespace seer
