// Matmul kernels against naive loops, for every weight type and both paths.
// Tolerances: float types |y - ref| <= 1e-5 * sum|w x| (f32 summation order only);
// quantized types against an integer reference with the same Q8 activations: the
// same bound; against plain f32 math: 2e-2 * sum|w x| (Q8 activation rounding plus
// weight quantization error, which the reference includes).
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "common/error.h"
#include "kernels/dot_kernels.h"
#include "kernels/matmul.h"
#include "model/quant.h"

namespace seer {
namespace {

struct TestWeight {
  WeightTensor t;
  std::vector<uint8_t> bytes;
  std::vector<float> f32;  // the exact values the weight holds, as f32
};

TestWeight make_weight(GgmlType type, int64_t rows, int64_t cols, std::mt19937& rng) {
  std::normal_distribution<float> dist(0.0f, 1.0f);
  std::vector<float> src(rows * cols);
  for (auto& v : src) v = dist(rng);
  TestWeight w;
  w.t.name = "w";
  w.t.type = type;
  w.t.rows = rows;
  w.t.cols = cols;
  w.bytes.resize(ggml_row_bytes(type, cols) * rows);
  w.f32.resize(rows * cols);
  for (int64_t r = 0; r < rows; ++r) {
    const float* s = &src[r * cols];
    float* f = &w.f32[r * cols];
    uint8_t* dst = w.bytes.data() + r * ggml_row_bytes(type, cols);
    switch (type) {
      case GgmlType::F32:
        std::memcpy(dst, s, cols * 4);
        std::copy(s, s + cols, f);
        break;
      case GgmlType::F16:
        for (int64_t i = 0; i < cols; ++i) {
          uint16_t h = fp32_to_fp16(s[i]);
          std::memcpy(dst + 2 * i, &h, 2);
          f[i] = fp16_to_fp32(h);
        }
        break;
      case GgmlType::BF16:
        for (int64_t i = 0; i < cols; ++i) {
          uint16_t h = fp32_to_bf16(s[i]);
          std::memcpy(dst + 2 * i, &h, 2);
          f[i] = bf16_to_fp32(h);
        }
        break;
      default:  // the block types: the format's quantizer and dequantizer
        quantize_row(type, s, dst, cols);
        dequantize_row(type, dst, f, cols);
    }
  }
  w.t.data = w.bytes.data();
  w.t.bytes = w.bytes.size();
  return w;
}

bool quantized(GgmlType t) { return is_quantized(t); }

// Scalar activation quantization the type's kernels use (Q8 in blocks of 32, Q8_K in
// blocks of 256; round half to even, as the kernels).
void ref_quantize(GgmlType t, const float* x, int64_t k, std::vector<float>& xr) {
  const int64_t block = activation_kind(t) == ActKind::Q8K ? 256 : 32;
  xr.resize(k);
  for (int64_t b = 0; b < k / block; ++b) {
    float amax = 0;
    for (int j = 0; j < block; ++j) amax = std::max(amax, std::fabs(x[b * block + j]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int j = 0; j < block; ++j) xr[b * block + j] = std::nearbyint(x[b * block + j] * id) * d;
  }
}

struct Case {
  GgmlType type;
  int64_t k;
};

class MatmulTest : public ::testing::TestWithParam<Case> {};

TEST_P(MatmulTest, MatchesNaiveLoopsOnBothPaths) {
  const Case c = GetParam();
  std::mt19937 rng(1234);
  const int64_t m = 83;  // not a multiple of the row tiles
  TestWeight w = make_weight(c.type, m, c.k, rng);
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  std::normal_distribution<float> dist(0.0f, 1.0f);
  for (int64_t n : {1, 2, 3, 4, 5, 9, 16, 33, 70}) {
    std::vector<float> x(n * c.k);
    for (auto& v : x) v = dist(rng);
    for (MatmulPath path : {MatmulPath::Dot, MatmulPath::Gemm, MatmulPath::Auto}) {
      ctx.set_path(path);
      std::vector<float> y(n * m, NAN);
      ctx.run(x.data(), n, w.t, y.data());
      std::vector<float> xr;
      for (int64_t j = 0; j < n; ++j) {
        const float* xj = &x[j * c.k];
        if (quantized(c.type)) ref_quantize(c.type, xj, c.k, xr);
        for (int64_t r = 0; r < m; ++r) {
          double exact = 0, plain = 0, mag = 0;
          for (int64_t i = 0; i < c.k; ++i) {
            const double wv = w.f32[r * c.k + i];
            plain += wv * xj[i];
            exact += wv * (quantized(c.type) ? xr[i] : xj[i]);
            mag += std::fabs(wv * xj[i]);
          }
          const float got = y[j * m + r];
          ASSERT_NEAR(got, exact, 1e-5 * mag + 1e-6)
              << ggml_type_name(c.type) << " n=" << n << " row=" << r << " path=" << static_cast<int>(path);
          if (quantized(c.type)) {
            ASSERT_NEAR(got, plain, 2e-2 * mag);
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, MatmulTest,
                         ::testing::Values(Case{GgmlType::F32, 100}, Case{GgmlType::F32, 256},
                                           Case{GgmlType::F16, 100}, Case{GgmlType::F16, 256},
                                           Case{GgmlType::BF16, 100}, Case{GgmlType::BF16, 256},
                                           Case{GgmlType::Q8_0, 96}, Case{GgmlType::Q8_0, 256},
                                           Case{GgmlType::Q4_0, 96}, Case{GgmlType::Q4_0, 256},
                                           Case{GgmlType::Q4_1, 96}, Case{GgmlType::Q5_0, 96},
                                           Case{GgmlType::Q5_1, 96}, Case{GgmlType::IQ4_NL, 96},
                                           Case{GgmlType::Q2_K, 512}, Case{GgmlType::Q3_K, 512},
                                           Case{GgmlType::Q4_K, 512}, Case{GgmlType::Q5_K, 512},
                                           Case{GgmlType::Q6_K, 512}, Case{GgmlType::IQ4_XS, 512}),
                         [](const auto& info) {
                           return std::string(ggml_type_name(info.param.type)) + "_k" + std::to_string(info.param.k);
                         });

TEST(Matmul, SeveralTargetsInOneCallMatchSeparateCalls) {
  std::mt19937 rng(7);
  const int64_t k = 128;
  TestWeight a = make_weight(GgmlType::Q8_0, 40, k, rng);
  TestWeight b = make_weight(GgmlType::F16, 24, k, rng);
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  for (int64_t n : {1, 64}) {
    std::vector<float> x(n * k);
    std::normal_distribution<float> dist;
    for (auto& v : x) v = dist(rng);
    std::vector<float> ya(n * 40), yb(n * 24), ya2(n * 40), yb2(n * 24);
    const MatmulTarget both[] = {{&a.t, ya.data()}, {&b.t, yb.data()}};
    ctx.run(x.data(), n, k, both);
    ctx.run(x.data(), n, a.t, ya2.data());
    ctx.run(x.data(), n, b.t, yb2.data());
    EXPECT_EQ(ya, ya2);
    EXPECT_EQ(yb, yb2);
  }
}

TEST(Matmul, QuantizedResultDoesNotDependOnBatchPath) {
  // A token's output through the dot path (decode) and the sgemm path (prefill)
  // differs only by f32 summation order because both see the same Q8 activations.
  std::mt19937 rng(9);
  const int64_t k = 512, m = 64;
  TestWeight w = make_weight(GgmlType::Q4_0, m, k, rng);
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  std::vector<float> x(k);
  std::normal_distribution<float> dist;
  for (auto& v : x) v = dist(rng);
  std::vector<float> yd(m), yg(m);
  ctx.set_path(MatmulPath::Dot);
  ctx.run(x.data(), 1, w.t, yd.data());
  ctx.set_path(MatmulPath::Gemm);
  ctx.run(x.data(), 1, w.t, yg.data());
  for (int64_t r = 0; r < m; ++r) EXPECT_NEAR(yd[r], yg[r], 1e-4f * (1 + std::fabs(yd[r])));
}

TEST(Matmul, DotPathGivesEachTokenTheSameBitsWhateverTheBatch) {
  // The dot path's per-output summation order is fixed (k chunks of a fixed size), so
  // a token alone and inside a batch of any size below the gemm threshold get
  // identical results: decode batches do not change a request's tokens. The batch
  // crosses kQGemmMinCols: the int8 GEMM tiles must give the tile kernels' bits. Float
  // weights also take a k that is no multiple of the vector width (stories260K's FFN
  // of 172; "tail"): its last elements once summed differently per register tile.
  std::mt19937 rng(11);
  const int64_t m = 40;
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  ctx.set_path(MatmulPath::Dot);
  std::normal_distribution<float> dist;
  for (GgmlType t : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1,
                     GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::Q4_K,
                     GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS}) {
    std::vector<int64_t> ks{activation_kind(t) == ActKind::Q8K ? 2048 + 256 : 2048 + 96};  // a partial last k chunk
    if (!is_quantized(t)) ks.insert(ks.end(), {172, 1024 + 76});
    for (int64_t k : ks) {
      TestWeight w = make_weight(t, m, k, rng);
      for (int64_t n : {int64_t{2}, int64_t{3}, kQGemmMinCols + 5}) {  // every register tile width
        std::vector<float> x(n * k);
        for (auto& v : x) v = dist(rng);
        std::vector<float> all(n * m), one(m);
        ctx.run(x.data(), n, w.t, all.data());
        for (int64_t j = 0; j < n; ++j) {
          ctx.run(&x[j * k], 1, w.t, one.data());
          for (int64_t r = 0; r < m; ++r)
            ASSERT_EQ(one[r], all[j * m + r]) << ggml_type_name(t) << " k " << k << " n " << n << " token " << j;
        }
      }
    }
  }
}

TEST(Matmul, RejectsMismatchedColumns) {
  std::mt19937 rng(1);
  TestWeight w = make_weight(GgmlType::F32, 4, 64, rng);
  ThreadPool pool(2);
  MatmulContext ctx(pool);
  std::vector<float> x(32), y(4);
  MatmulTarget t{&w.t, y.data()};
  EXPECT_THROW(ctx.run(x.data(), 1, 32, std::span<const MatmulTarget>(&t, 1)), Error);
}

}  // namespace
}  // namespace seer
