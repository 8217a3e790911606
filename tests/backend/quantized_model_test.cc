// Models written by make-model's writer (seer's own quantizers) in every block type,
// and in llama.cpp's Q4_K_M mix of types, loaded back from the GGUF file and run
// through the CPU backend: a prompt in one pass, then decodes. Logits must be finite
// and close to the same random model in F32; the bound per type is stated in
// kTolerance with the error measured when it was set.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "backend/cpu_backend.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "support/test_paths.h"

namespace seer {
namespace {

ModelShape test_shape() {  // rows of 256 and 512 elements: every block size fits
  return ModelShape{"quant-test", 2, 256, 4, 2, 512, 300, 64, 10000.0, 1e-5};
}

std::string write_model(GgmlType type, const std::map<std::string, GgmlType>& mix = {}) {
  RandomModelOptions o;
  o.shape = test_shape();
  o.type = type;
  o.tensor_types = mix;
  o.seed = 3;
  o.threads = 2;
  o.progress = false;
  const std::string path = testing::scratch_dir() + "/quant-" + std::string(ggml_type_name(type)) +
                           (mix.empty() ? "" : "-mix") + ".gguf";
  write_random_model(path, o);
  return path;
}

// Logit rows of a 12-token prompt (its last position) and 4 decodes after it.
std::vector<std::vector<float>> run_model(const std::string& path) {
  auto file = ModelFile::open(path);
  CpuBackendOptions o;
  o.kv.block_size = 16;
  o.kv.device_blocks = 4;
  o.kv.host_blocks = 1;
  o.threads = 2;
  auto be = make_cpu_backend(file->config(), file->weights(), o);
  const int32_t tokens[16] = {1, 17, 250, 3, 99, 42, 7, 280, 13, 64, 5, 131, 77, 200, 9, 33};
  std::vector<std::vector<float>> rows;
  std::vector<float> logits;
  ForwardBatch prompt;
  prompt.sequences.push_back({{0}});
  for (int p = 0; p < 12; ++p) prompt.add(0, tokens[p], p, p == 11);
  be->forward(prompt, logits);
  rows.push_back(logits);
  for (int p = 12; p < 16; ++p) {
    ForwardBatch step;
    step.sequences.push_back({{0}});
    step.add(0, tokens[p], p, true);
    be->forward(step, logits);
    rows.push_back(logits);
  }
  return rows;
}

// RMS(logit - reference logit) / RMS(reference logit) over all rows; infinite when a
// logit is not finite.
double relative_error(const std::vector<std::vector<float>>& got, const std::vector<std::vector<float>>& ref) {
  double diff = 0, scale = 0;
  for (size_t r = 0; r < ref.size(); ++r) {
    for (size_t i = 0; i < ref[r].size(); ++i) {
      if (!std::isfinite(got[r][i])) return INFINITY;
      diff += (double(got[r][i]) - ref[r][i]) * (double(got[r][i]) - ref[r][i]);
      scale += double(ref[r][i]) * ref[r][i];
    }
  }
  return std::sqrt(diff / scale);
}

const std::vector<std::vector<float>>& f32_logits() {
  static const auto rows = run_model(write_model(GgmlType::F32));
  return rows;
}

// 1.5x the error measured on this model (seer's quantizers, 2026-11-25): Q8_0 0.017,
// Q6_K 0.033, Q5_1 0.071, Q5_0 0.082, Q5_K 0.082, Q4_1 0.141, Q4_0 0.191, Q4_K 0.147,
// IQ4_NL 0.181, IQ4_XS 0.180, Q3_K 0.345, Q2_K 0.551 (random weights, so every
// weight's rounding error reaches the logits; trained models fare better).
const std::map<std::string, double> kTolerance = {
    {"Q8_0", 0.025}, {"Q6_K", 0.05},  {"Q5_1", 0.11},   {"Q5_0", 0.12},   {"Q5_K", 0.12}, {"Q4_1", 0.21},
    {"Q4_0", 0.29},  {"Q4_K", 0.22},  {"IQ4_NL", 0.27}, {"IQ4_XS", 0.27}, {"Q3_K", 0.52}, {"Q2_K", 0.83},
};

class QuantizedModel : public ::testing::TestWithParam<std::string> {};

TEST_P(QuantizedModel, LoadsAndStaysCloseToF32) {
  const GgmlType type = *ggml_type_from_name(GetParam());
  const double err = relative_error(run_model(write_model(type)), f32_logits());
  RecordProperty("relative_error", std::to_string(err));
  std::printf("%-7s rms dlogit / rms logit = %.4f\n", GetParam().c_str(), err);
  EXPECT_LE(err, kTolerance.at(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(AllTypes, QuantizedModel,
                         ::testing::Values("Q8_0", "Q6_K", "Q5_1", "Q5_0", "Q5_K", "Q4_1", "Q4_0", "Q4_K", "IQ4_NL",
                                           "IQ4_XS", "Q3_K", "Q2_K"),
                         [](const auto& info) { return info.param; });

// llama.cpp's Q4_K_M recipe for a Llama model (llama-quant.cpp): Q4_K everywhere
// (token embeddings included) except output.weight in Q6_K, and attn_v / ffn_down
// in Q6_K on the layers use_more_bits picks (i < n/8, i >= 7n/8, or (i - n/8) % 3
// == 2): with 2 layers, layer 1.
std::map<std::string, GgmlType> q4_k_m_mix(int n_layers) {
  std::map<std::string, GgmlType> mix{{"output.weight", GgmlType::Q6_K}};
  for (int i = 0; i < n_layers; ++i) {
    const bool more = i < n_layers / 8 || i >= 7 * n_layers / 8 || (i - n_layers / 8) % 3 == 2;
    if (!more) continue;
    mix["blk." + std::to_string(i) + ".attn_v.weight"] = GgmlType::Q6_K;
    mix["blk." + std::to_string(i) + ".ffn_down.weight"] = GgmlType::Q6_K;
  }
  return mix;
}

TEST(QuantizedModelMix, Q4KMRecipeLoadsAndStaysCloseToF32) {
  const auto mix = q4_k_m_mix(test_shape().n_layers);
  ASSERT_EQ(mix.size(), 3u);
  const std::string path = write_model(GgmlType::Q4_K, mix);
  auto file = ModelFile::open(path);
  EXPECT_EQ(file->weights().token_embd.type, GgmlType::Q4_K);
  EXPECT_EQ(file->weights().output.type, GgmlType::Q6_K);
  EXPECT_EQ(file->weights().layers[1].wv.type, GgmlType::Q6_K);
  EXPECT_EQ(file->weights().layers[0].wv.type, GgmlType::Q4_K);
  const double err = relative_error(run_model(path), f32_logits());
  std::printf("Q4_K_M  rms dlogit / rms logit = %.4f\n", err);
  EXPECT_LE(err, kTolerance.at("Q4_K"));
}

// A file written by llama.cpp's llama-quantize (Q4_K_M, from the F16 make-model file
// of test_shape() and seed 3; scripts/reference/make_quant_refs.sh): it loads, has the
// recipe's types, and seer's own Q4_K_M mix is about as close to the F16 model.
TEST(QuantizedModelMix, LlamaQuantizeQ4KMFileLoadsAndStaysCloseToF16) {
  const std::string path = testing::source_dir() + "/tests/data/quant_ref/llama_q4_k_m.gguf";
  auto file = ModelFile::open(path);
  const auto mix = q4_k_m_mix(test_shape().n_layers);
  const ModelWeights& w = file->weights();
  auto expect_type = [&](const WeightTensor& t) {
    auto it = mix.find(t.name);
    EXPECT_EQ(t.type, it == mix.end() ? GgmlType::Q4_K : it->second) << t.name;
  };
  expect_type(w.token_embd);
  expect_type(w.output);
  for (const auto& l : w.layers)
    for (const WeightTensor* t : {&l.wq, &l.wk, &l.wv, &l.wo, &l.w_gate, &l.w_up, &l.w_down}) expect_type(*t);

  const auto f16 = run_model(write_model(GgmlType::F16));
  const double llama = relative_error(run_model(path), f16);
  const double seer = relative_error(run_model(write_model(GgmlType::Q4_K, mix)), f16);
  std::printf("Q4_K_M vs F16: llama-quantize's file %.4f, seer's %.4f\n", llama, seer);
  RecordProperty("llama_quantize_relative_error", std::to_string(llama));
  RecordProperty("seer_relative_error", std::to_string(seer));
  EXPECT_LE(llama, kTolerance.at("Q4_K"));
  // Measured 0.1365 (seer) vs 0.1338 (llama-quantize): a single random model's logits
  // are a noisy measure, so 10 %; the weight-level comparison is quant_ref_test.cc's.
  EXPECT_LE(seer, 1.1 * llama);
}

TEST(QuantizedModelMix, RowsNotMultipleOfTheBlockAreRefused) {
  RandomModelOptions o;
  o.shape = test_shape();
  o.shape.ffn_dim = 384;  // ffn_down rows of 384: not a multiple of 256
  o.type = GgmlType::Q4_K;
  o.progress = false;
  try {
    write_random_model(testing::scratch_dir() + "/bad.gguf", o);
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("384"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seer
