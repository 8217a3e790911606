// The quantized dot kernels (kernels/qdot.h) of every type and instruction set
// against the scalar reference, on random blocks (random bytes, finite fp16 scales),
// and the batch invariance the engine relies on.
// Tolerance: |simd - scalar| <= 2e-5 * sum over blocks of |scalar block value|
// (integer sums inside a block are exact in both; they differ in f32 rounding of the
// per-block scale products and the order of the f32 sums).
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/dot_kernels.h"
#include "kernels/quantize_act.h"
#include "kernels/quant_test_data.h"
#include "model/quant.h"

namespace seer {
namespace {

const GgmlType kTypes[] = {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                           GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};

class QDotTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(QDotTest, EverySimdKernelMatchesTheScalarReference) {
  const GgmlType type = GetParam();
  std::mt19937 rng(static_cast<unsigned>(type) * 7 + 1);
  const int64_t m = 19, k = test_cols(type), n = 5;
  RandomWeight w = random_weight(type, m, k, rng);
  Acts a = random_acts(n, k, rng);
  const QDotKernel& ref = *qdot_kernel(type, QIsa::Scalar);
  std::vector<float> want(n * m);
  dot_rows_quant_with(ref, w.t, 0, m, a.view(), n, want.data(), m);
  int tested = 0;
  for (QIsa isa : kAllQIsas) {
    if (isa == QIsa::Scalar) continue;
    const QDotKernel* kern = qdot_kernel(type, isa);
    if (!kern) continue;
    ++tested;
    EXPECT_EQ(kern->act, ref.act);
    for (int64_t cols = 1; cols <= n; ++cols) {
      std::vector<float> got(cols * m, NAN);
      dot_rows_quant_with(*kern, w.t, 0, m, a.view(), cols, got.data(), m);
      for (int64_t c = 0; c < cols; ++c)
        for (int64_t r = 0; r < m; ++r)
          ASSERT_NEAR(got[c * m + r], want[c * m + r], 2e-5f * magnitude(ref, w, r, a, c))
              << ggml_type_name(type) << " " << qisa_name(isa) << " batch " << cols << " column " << c << " row " << r;
    }
  }
#ifdef __AVX2__
  EXPECT_GE(tested, 1) << "no SIMD kernel compiled for " << ggml_type_name(type);
#endif
}

TEST_P(QDotTest, EachColumnGetsTheSameBitsWhateverTheBatch) {
  const GgmlType type = GetParam();
  std::mt19937 rng(static_cast<unsigned>(type) * 13 + 5);
  const int64_t m = 7, k = test_cols(type), n = 9;
  RandomWeight w = random_weight(type, m, k, rng);
  Acts a = random_acts(n, k, rng);
  for (QIsa isa : kAllQIsas) {
    const QDotKernel* kern = qdot_kernel(type, isa);
    if (!kern) continue;
    std::vector<float> all(n * m);
    dot_rows_quant_with(*kern, w.t, 0, m, a.view(), n, all.data(), m);
    for (int64_t j = 0; j < n; ++j) {
      QuantActs one = a.view();
      one.q8 += j * k;
      one.d8 += j * (k / kQK);
      one.s8 += j * (k / kQK);
      one.q8k += j * (k / kQK_K);
      std::vector<float> y(m);
      dot_rows_quant_with(*kern, w.t, 0, m, one, 1, y.data(), m);
      for (int64_t r = 0; r < m; ++r)
        ASSERT_EQ(y[r], all[j * m + r]) << ggml_type_name(type) << " " << qisa_name(isa) << " token " << j;
    }
  }
}

TEST_P(QDotTest, KernelsMatchTheDotOfTheDequantizedRows) {
  // The kernels read the format as the dequantizer in model/ does (written apart):
  // each kernel's result equals the f64 dot of dequantize_row(w) with the
  // dequantized activations, up to f32 rounding (1e-5 * sum |w x|).
  const GgmlType type = GetParam();
  std::mt19937 rng(static_cast<unsigned>(type) * 29 + 3);
  const int64_t m = 11, k = test_cols(type), n = 3;
  RandomWeight w = random_weight(type, m, k, rng);
  Acts a = random_acts(n, k, rng);
  const bool q8k = qdot_kernel(type, QIsa::Scalar)->act == ActKind::Q8K;
  std::vector<float> wf(k), xf(k);
  for (QIsa isa : kAllQIsas) {
    const QDotKernel* kern = qdot_kernel(type, isa);
    if (!kern) continue;
    std::vector<float> y(n * m);
    dot_rows_quant_with(*kern, w.t, 0, m, a.view(), n, y.data(), m);
    for (int64_t c = 0; c < n; ++c) {
      if (q8k)
        dequantize_act_q8k(&a.k[c * (k / kQK_K)], k, xf.data());
      else
        dequantize_act_q8(&a.q[c * k], &a.d[c * (k / kQK)], k, xf.data());
      for (int64_t r = 0; r < m; ++r) {
        dequantize_row(type, w.bytes.data() + r * ggml_row_bytes(type, k), wf.data(), k);
        double dot = 0, mag = 0;
        for (int64_t i = 0; i < k; ++i) {
          dot += double{wf[i]} * xf[i];
          mag += std::fabs(double{wf[i]} * xf[i]);
        }
        ASSERT_NEAR(y[c * m + r], dot, 1e-5 * mag + 1e-6)
            << ggml_type_name(type) << " " << qisa_name(isa) << " column " << c << " row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QDotTest, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(QuantizeAct, Q8KRoundsToNearestEvenAndSumsEachSixteen) {
  std::mt19937 rng(3);
  std::normal_distribution<float> dist(0.0f, 3.0f);
  std::vector<float> x(512);
  for (auto& v : x) v = dist(rng);
  std::fill(x.begin() + 256, x.end(), 0.0f);  // an all-zero block
  std::vector<BlockQ8_K> y(2);
  quantize_act_q8k(x.data(), 512, y.data());
  for (int b = 0; b < 2; ++b) {
    float amax = 0;
    for (int j = 0; j < 256; ++j) amax = std::max(amax, std::fabs(x[b * 256 + j]));
    EXPECT_EQ(y[b].d, amax / 127.0f);
    const float id = y[b].d != 0 ? 1.0f / y[b].d : 0.0f;
    for (int j = 0; j < 256; ++j)
      ASSERT_EQ(y[b].qs[j], static_cast<int8_t>(std::nearbyint(x[b * 256 + j] * id))) << b << " " << j;
    for (int g = 0; g < 16; ++g) {
      int sum = 0;
      for (int j = 0; j < 16; ++j) sum += y[b].qs[16 * g + j];
      EXPECT_EQ(y[b].bsums[g], sum);
    }
  }
  std::vector<float> back(512);
  dequantize_act_q8k(y.data(), 512, back.data());
  for (int i = 0; i < 512; ++i) EXPECT_NEAR(back[i], x[i], y[i / 256].d * 0.5f + 1e-7f);
}

TEST(QuantizeAct, Q8BlockSumsAreScaleTimesSumOfQuants) {
  std::mt19937 rng(4);
  std::normal_distribution<float> dist;
  std::vector<float> x(96);
  for (auto& v : x) v = dist(rng);
  std::vector<int8_t> q(96);
  std::vector<float> d(3), s(3);
  quantize_act_q8(x.data(), 96, q.data(), d.data(), s.data());
  for (int b = 0; b < 3; ++b) {
    int sum = 0;
    for (int j = 0; j < 32; ++j) sum += q[b * 32 + j];
    EXPECT_EQ(s[b], d[b] * static_cast<float>(sum));
  }
}

TEST(QDot, EveryQuantizedTypeHasAKernelAndAnActivationKind) {
  for (GgmlType t : kTypes) {
    EXPECT_TRUE(is_quantized(t)) << ggml_type_name(t);
    ASSERT_NE(best_qdot_kernel(t), nullptr);
    EXPECT_EQ(activation_kind(t), qdot_kernel(t, QIsa::Scalar)->block_elems == kQK ? ActKind::Q8 : ActKind::Q8K);
  }
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16}) EXPECT_FALSE(is_quantized(t));
}

}  // namespace
}  // namespace seer
