// Matmuls with the block formats that have no integer dot kernel (kernels/dot_dequant.h
// on the dot path, widened tiles on the gemm path), against naive loops over the
// dequantized weights. Once a type gets an integer kernel (is_quantized), its
// activations are rounded to 8 bits and only the loose bound applies.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "kernels/dot_kernels.h"
#include "kernels/matmul.h"
#include "kernels/thread_pool.h"
#include "model/quant.h"

namespace seer {
namespace {

struct Weight {
  WeightTensor t;
  std::vector<uint8_t> bytes;
  std::vector<float> f32;  // the values the bytes hold
};

Weight make_weight(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 0.05f);
  Weight w;
  const size_t row_bytes = ggml_row_bytes(type, cols);
  w.bytes.resize(row_bytes * rows);
  w.f32.resize(rows * cols);
  std::vector<float> src(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (auto& v : src) v = dist(rng);
    quantize_row(type, src.data(), w.bytes.data() + r * row_bytes, cols);
    dequantize_row(type, w.bytes.data() + r * row_bytes, &w.f32[r * cols], cols);
  }
  w.t = WeightTensor{"w", type, rows, cols, w.bytes.data(), w.bytes.size()};
  return w;
}

class DotDequant : public ::testing::TestWithParam<GgmlType> {};

TEST_P(DotDequant, BothPathsMatchNaiveLoopsAndDecodeIsBatchInvariant) {
  const GgmlType type = GetParam();
  std::mt19937 rng(5);
  const int64_t m = 37, k = 512;
  Weight w = make_weight(type, m, k, rng);
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  const double tol = is_quantized(type) ? 2e-2 : 1e-5;
  for (int64_t n : {1, 3, 9, 33}) {
    std::vector<float> x(n * k);
    for (auto& v : x) v = dist(rng);
    for (MatmulPath path : {MatmulPath::Dot, MatmulPath::Gemm}) {
      ctx.set_path(path);
      std::vector<float> y(n * m, NAN);
      ctx.run(x.data(), n, w.t, y.data());
      for (int64_t j = 0; j < n; ++j) {
        for (int64_t r = 0; r < m; ++r) {
          double exact = 0, mag = 0;
          for (int64_t i = 0; i < k; ++i) {
            exact += double(w.f32[r * k + i]) * x[j * k + i];
            mag += std::fabs(double(w.f32[r * k + i]) * x[j * k + i]);
          }
          ASSERT_NEAR(y[j * m + r], exact, tol * mag + 1e-6)
              << ggml_type_name(type) << " n=" << n << " row=" << r << " path=" << static_cast<int>(path);
        }
      }
      if (path != MatmulPath::Dot) continue;
      std::vector<float> one(m);
      for (int64_t j = 0; j < n; ++j) {  // a token alone gets the same bits as in the batch
        ctx.run(&x[j * k], 1, w.t, one.data());
        for (int64_t r = 0; r < m; ++r) ASSERT_EQ(one[r], y[j * m + r]) << ggml_type_name(type);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(BlockTypes, DotDequant,
                         ::testing::Values(GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::Q2_K,
                                           GgmlType::Q3_K, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K,
                                           GgmlType::IQ4_NL, GgmlType::IQ4_XS),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

}  // namespace
}  // namespace seer
