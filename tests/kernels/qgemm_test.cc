// The GEMM tiles of the quantized kernels (qdot.h, QDotKernel::gemm): for every type
// and instruction set that has one, the GEMM driver must give every (row, column) the
// bits of the tile kernel (so that switching paths by batch size cannot change a
// token's result) and agree with the scalar reference as the tile kernels do. Shapes
// are ragged: rows not a multiple of the tile's rows, columns not of its columns, an
// odd number of 32-element blocks and a partial last k chunk.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "kernels/dot_kernels.h"
#include "kernels/kernel_level.h"
#include "kernels/quant_test_data.h"

namespace seer {
namespace {

const GgmlType kTypes[] = {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0,
                           GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::Q2_K, GgmlType::Q3_K,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::IQ4_XS};

bool same_bits(float a, float b) { return std::memcmp(&a, &b, sizeof(float)) == 0; }

class QGemmTest : public ::testing::TestWithParam<GgmlType> {};

TEST_P(QGemmTest, GivesTheTileKernelsBitsAndMatchesTheScalarReference) {
  const GgmlType type = GetParam();
  std::mt19937 rng(static_cast<unsigned>(type) * 17 + 3);
  const int64_t m = 2 * kQGemmMaxR + 5, k = test_cols(type), n = 3 * kQGemmMaxC + 2;
  RandomWeight w = random_weight(type, m, k, rng);
  Acts a = random_acts(n, k, rng);
  const QDotKernel& ref = *qdot_kernel(type, QIsa::Scalar);
  std::vector<float> want(n * m);
  dot_rows_quant_with(ref, w.t, 0, m, a.view(), n, want.data(), m);
  for (QIsa isa : kAllQIsas) {
    const QDotKernel* kern = qdot_kernel(type, isa);
    if (!kern || !kern->gemm) continue;
    // Row ranges starting on and off a multiple of the tile rows, as the matmul tasks cut them.
    for (int64_t r0 : {int64_t{0}, int64_t{1}, int64_t{kQGemmMaxR + 2}}) {
      // 5..8 columns: two register tiles; more: one decode per super-block shared by the tiles (dot_kquant.cc).
      for (int64_t cols : {int64_t{1}, int64_t{3}, int64_t{4}, int64_t{7}, int64_t{8}, int64_t{13}, int64_t{kQGemmMaxC - 1},
                           int64_t{kQGemmMaxC}, n}) {
        std::vector<float> tiled(cols * m, NAN), gemm(cols * m, NAN);
        dot_rows_quant_with(*kern, w.t, r0, m, a.view(), cols, tiled.data(), m);
        gemm_rows_quant_with(*kern, w.t, r0, m, a.view(), cols, gemm.data(), m);
        for (int64_t c = 0; c < cols; ++c)
          for (int64_t r = r0; r < m; ++r) {
            const float g = gemm[c * m + r];
            ASSERT_TRUE(same_bits(g, tiled[c * m + r]))
                << ggml_type_name(type) << " " << qisa_name(isa) << " rows from " << r0 << " batch " << cols
                << " column " << c << " row " << r << ": gemm " << g << " tile " << tiled[c * m + r];
            ASSERT_NEAR(g, want[c * m + r], 2e-5f * magnitude(ref, w, r, a, c))
                << ggml_type_name(type) << " " << qisa_name(isa) << " column " << c << " row " << r;
          }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, QGemmTest, ::testing::ValuesIn(kTypes),
                         [](const auto& info) { return std::string(ggml_type_name(info.param)); });

TEST(QGemm, EveryTypeThatNeedsPrefillSpeedHasAGemmTile) {
  // The types of llama-quantize's Q8_0 and Q4_K_M files (Q4_K_M holds Q6_K tensors too)
  // and of its Q4_1, Q5_0, Q5_1 and IQ4_NL recipes. Q8_0's GEMM tile is the 512-bit one;
  // the others have one for AVX2 as well.
#ifdef __AVX2__
  // SEER_KERNEL_LEVEL=scalar runs the reference kernels, which have none.
  const bool simd = kernel_level_cap() >= QIsa::Avx2;
  for (GgmlType t : {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL})
    EXPECT_EQ(best_qdot_kernel(t)->gemm != nullptr, simd) << ggml_type_name(t);
#if defined(__AVX512F__) && defined(__AVX512BW__) && defined(__AVX512DQ__) && defined(__AVX512VNNI__)
  if (kernel_level_cap() >= QIsa::Avx512) EXPECT_NE(best_qdot_kernel(GgmlType::Q8_0)->gemm, nullptr);
#endif
#else
  GTEST_SKIP() << "no SIMD kernels compiled";
#endif
}

TEST(QGemm, DotRowsQuantGivesATokenTheSameBitsBelowAndAboveTheGemmThreshold) {
  std::mt19937 rng(23);
  for (GgmlType t : kTypes) {
    const int64_t m = 3 * kQGemmMaxR + 1, k = test_cols(t), n = kQGemmMinCols + 3;
    RandomWeight w = random_weight(t, m, k, rng);
    Acts a = random_acts(n, k, rng);
    std::vector<float> all(n * m);
    dot_rows_quant(w.t, 0, m, a.view(), n, all.data(), m);
    for (int64_t j = 0; j < n; ++j) {
      QuantActs one = a.view();
      one.q8 += j * k;
      one.d8 += j * (k / kQK);
      one.s8 += j * (k / kQK);
      one.q8k += j * (k / kQK_K);
      std::vector<float> y(m);
      dot_rows_quant(w.t, 0, m, one, 1, y.data(), m);
      for (int64_t r = 0; r < m; ++r)
        ASSERT_TRUE(same_bits(y[r], all[j * m + r])) << ggml_type_name(t) << " token " << j << " row " << r;
    }
  }
}

TEST(QGemm, TheAmxTileIsUsedWhereverTheCpuHasAmx) {
  // The AMX entry is gated at run time (CPUID, the kernel's grant of the tile registers,
  // SEER_NO_AMX); on a CPU that has AMX a gate that says no would silently leave prefill
  // on the 512-bit tile, so it must say yes there, and nowhere else.
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string flags((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const char* off = std::getenv("SEER_NO_AMX");
  const bool want = flags.find(" amx_int8") != std::string::npos && qdot_kernel(GgmlType::Q8_0, QIsa::Avx512) &&
                    !(off && *off && *off != '0');
  for (GgmlType t : {GgmlType::Q8_0, GgmlType::Q4_0, GgmlType::Q5_0, GgmlType::IQ4_NL}) {
    const QDotKernel* amx = qdot_kernel(t, QIsa::Amx);
    EXPECT_EQ(amx != nullptr, want) << ggml_type_name(t);
    if (amx && kernel_level_cap() == QIsa::Amx) EXPECT_EQ(best_qdot_kernel(t), amx) << ggml_type_name(t);
  }
  std::printf("AMX tile: %s\n", want ? "in use (this CPU has AMX)" : "not used (no AMX here, or SEER_NO_AMX)");
}

}  // namespace
}  // namespace seer
