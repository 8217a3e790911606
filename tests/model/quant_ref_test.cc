// seer's GGML block formats against llama.cpp's libggml (tests/data/quant_ref/).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>

#include "model/ggml_types.h"
#include "model/quant.h"
#include "model/quant_ref_data.h"

namespace seer {
namespace {

using quant_ref::RefManifest;

const char* const kRefTypes[] = {"Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q2_K",  "Q3_K",
                                 "Q4_K", "Q5_K", "Q6_K", "Q8_K", "IQ4_NL", "IQ4_XS"};

const RefManifest& manifest() {
  static const RefManifest m = quant_ref::read_manifest();
  return m;
}

TEST(QuantRef, InputsAreTheOnesTheVectorsWereMadeFrom) {
  const RefManifest& m = manifest();
  ASSERT_GT(m.exact.rows, 0) << "missing " << quant_ref::ref_dir() << "/manifest.txt";
  EXPECT_EQ(quant_ref::input_hash(quant_ref::make_input(m.exact.rows, m.exact.cols, m.exact.seed)), m.exact_hash);
  EXPECT_EQ(quant_ref::input_hash(quant_ref::make_input(m.rmse.rows, m.rmse.cols, m.rmse.seed)), m.rmse_hash);
  for (const char* name : kRefTypes) EXPECT_TRUE(m.types.count(name)) << name;
}

class QuantRefType : public ::testing::TestWithParam<const char*> {};

// Bit for bit: every float seer makes from ggml's bytes has the same bits as ggml's.
TEST_P(QuantRefType, DequantizesGgmlBytesBitForBit) {
  const std::string name = GetParam();
  const RefManifest& m = manifest();
  ASSERT_TRUE(m.types.count(name)) << name;
  const GgmlType type = *ggml_type_from_name(name);
  const size_t row_bytes = m.types.at(name).row_bytes;
  ASSERT_EQ(row_bytes, ggml_row_bytes(type, m.exact.cols));
  const quant_ref::RefVectors ref = quant_ref::read_vectors(name, row_bytes, m.exact);
  ASSERT_FALSE(ref.bytes.empty()) << "missing or truncated " << name << ".bin";
  std::vector<float> y(ref.floats.size());
  for (int64_t r = 0; r < m.exact.rows; ++r)
    dequantize_row(type, ref.bytes.data() + r * row_bytes, y.data() + r * m.exact.cols, m.exact.cols);
  int mismatches = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    if (std::memcmp(&y[i], &ref.floats[i], sizeof(float)) != 0 && ++mismatches <= 5)
      ADD_FAILURE() << name << " element " << i << ": seer " << y[i] << ", ggml " << ref.floats[i];
  }
  EXPECT_EQ(mismatches, 0);
}

// seer's own quantizer against ggml's on the larger input: RMSE of quantize ->
// dequantize against the f32 values no worse than ggml's (the figure the harness
// measured with ggml_quantize_chunk, i.e. llama-quantize without an imatrix).
TEST_P(QuantRefType, QuantizerErrorNoWorseThanGgml) {
  const std::string name = GetParam();
  const RefManifest& m = manifest();
  ASSERT_TRUE(m.types.count(name)) << name;
  const GgmlType type = *ggml_type_from_name(name);
  const std::vector<float> x = quant_ref::make_input(m.rmse.rows, m.rmse.cols, m.rmse.seed);
  std::vector<uint8_t> q(ggml_row_bytes(type, m.rmse.cols));
  std::vector<float> y(static_cast<size_t>(m.rmse.cols));
  double sum = 0;
  for (int64_t r = 0; r < m.rmse.rows; ++r) {
    const float* xr = x.data() + r * m.rmse.cols;
    quantize_row(type, xr, q.data(), m.rmse.cols);
    dequantize_row(type, q.data(), y.data(), m.rmse.cols);
    for (int64_t c = 0; c < m.rmse.cols; ++c) sum += (double(xr[c]) - y[c]) * (double(xr[c]) - y[c]);
  }
  const double rmse = std::sqrt(sum / static_cast<double>(x.size()));
  const double ggml = m.types.at(name).ggml_rmse;
  RecordProperty("seer_rmse", std::to_string(rmse));
  RecordProperty("ggml_rmse", std::to_string(ggml));
  std::printf("%-7s seer rmse %.6g  ggml %.6g  ratio %.4f\n", name.c_str(), rmse, ggml, rmse / ggml);
  // 1e-6 relative: the manifest's 9 significant digits.
  EXPECT_LE(rmse, ggml * (1 + 1e-6)) << name;
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantRefType, ::testing::ValuesIn(kRefTypes),
                         [](const auto& info) { return std::string(info.param); });

}  // namespace
}  // namespace seer
