// make-model writes each architecture's tensor layout and metadata, and the loader
// reads them back into the config llama.cpp would derive (the logits themselves are
// checked against llama.cpp in tests/backend/architecture_reference_test.cc).
#include <gtest/gtest.h>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "model_test_util.h"

namespace seer {
namespace {

std::unique_ptr<ModelFile> make(const std::string& name, RandomModelOptions opt) {
  opt.shape = *named_model_shape("tiny");
  if (opt.arch == "gemma3") opt.shape.n_layers = 6;
  opt.progress = false;
  opt.seed = 3;
  const std::string path = testing::scratch_dir() + "/arch-" + name + ".gguf";
  write_random_model(path, opt);
  return ModelFile::open(path);
}

TEST(Architectures, EveryMakeModelArchitectureLoads) {
  for (const auto& arch : random_model_architectures()) {
    RandomModelOptions opt;
    opt.arch = arch;
    if (arch == "qwen3moe") opt.experts = 4, opt.experts_used = 2;
    auto m = make(arch, opt);
    EXPECT_EQ(m->config().arch, arch);
    EXPECT_EQ(m->weights().layers.size(), opt.arch == "gemma3" ? 6u : 2u);
  }
}

TEST(Architectures, Qwen3HasPerHeadNormsAndItsOwnHeadDim) {
  RandomModelOptions opt;
  opt.arch = "qwen3";
  opt.shape.head_dim = 32;
  opt.tied_embeddings = true;
  opt.shape = *named_model_shape("tiny");
  opt.shape.head_dim = 32;
  opt.progress = false;
  const std::string path = testing::scratch_dir() + "/arch-qwen3-hd.gguf";
  write_random_model(path, opt);
  auto m = ModelFile::open(path);
  const ModelConfig& c = m->config();
  EXPECT_TRUE(c.qk_norm);
  EXPECT_TRUE(c.rope_neox);
  EXPECT_TRUE(c.tied_embeddings);
  EXPECT_EQ(c.head_dim, 32);
  EXPECT_EQ(m->weights().layers[0].wq.rows, 4 * 32);
  EXPECT_EQ(m->weights().layers[0].q_norm.cols, 32);
  EXPECT_EQ(m->weights().output.data, m->weights().token_embd.data);
}

TEST(Architectures, Llama3RopeFrequenciesAreReadFromTheirTensor) {
  RandomModelOptions opt;
  opt.llama3_rope = true;
  auto m = make("llama3", opt);
  ASSERT_TRUE(m->config().rope_freqs);
  const auto& t = m->weights().rope_freqs;
  ASSERT_EQ(t.cols, 8);
  const auto want = llama3_rope_divisors(16, 10000.0);
  for (int i = 0; i < 8; ++i) EXPECT_FLOAT_EQ(static_cast<const float*>(t.data)[i], want[i]);
  // Llama 3.1's rule: short wavelengths keep their frequency, long ones are divided by 8.
  EXPECT_FLOAT_EQ(want.front(), 1.0f);
  EXPECT_FLOAT_EQ(want.back(), 8.0f);
}

TEST(Architectures, GemmaLayersAlternateLocalAndGlobal) {
  RandomModelOptions opt;
  opt.arch = "gemma2";
  opt.sliding_window = 8;
  auto g2 = make("gemma2", opt);
  EXPECT_EQ(g2->config().sliding_window, 8);
  EXPECT_TRUE(g2->config().layer_is_local(0));
  EXPECT_FALSE(g2->config().layer_is_local(1));
  EXPECT_DOUBLE_EQ(g2->config().attn_softcap, 50.0);  // llama.cpp's defaults when the file has none
  EXPECT_DOUBLE_EQ(g2->config().final_softcap, 30.0);
  EXPECT_FLOAT_EQ(g2->config().embed_scale, 8.0f);
  opt.arch = "gemma3";
  auto g3 = make("gemma3", opt);
  const ModelConfig& c = g3->config();
  for (int l = 0; l < 6; ++l) EXPECT_EQ(c.layer_is_local(l), l != 5) << l;
  EXPECT_DOUBLE_EQ(c.rope_base_local, 10000.0);
  EXPECT_DOUBLE_EQ(c.final_softcap, 0.0);
  EXPECT_TRUE(c.qk_norm && c.post_norms && c.gelu_ffn);
  opt.sliding_window = 0;  // gemma3 without a window: every layer global
  auto g3g = make("gemma3-global", opt);
  EXPECT_FALSE(g3g->config().layer_is_local(0));
}

TEST(Architectures, Phi3FusedTensorsAreSplitAtLoad) {
  RandomModelOptions opt;
  opt.arch = "phi3";
  opt.longrope = true;
  opt.rope_dim = 12;
  auto m = make("phi3", opt);
  const ModelConfig& c = m->config();
  const LayerWeights& l = m->weights().layers[0];
  EXPECT_EQ(l.wq.rows, 64);
  EXPECT_EQ(l.wk.rows, 32);
  EXPECT_EQ(static_cast<const uint8_t*>(l.wk.data), static_cast<const uint8_t*>(l.wq.data) + l.wq.bytes);
  EXPECT_EQ(static_cast<const uint8_t*>(l.wv.data), static_cast<const uint8_t*>(l.wk.data) + l.wk.bytes);
  EXPECT_EQ(static_cast<const uint8_t*>(l.w_up.data), static_cast<const uint8_t*>(l.w_gate.data) + l.w_gate.bytes);
  EXPECT_EQ(l.w_gate.rows, c.ffn_dim);
  EXPECT_EQ(c.rope_dim, 12);
  EXPECT_EQ(c.rope_freqs_tensor, "rope_factors_long.weight");  // context 512 > original 256
  EXPECT_GT(c.rope_attn_factor, 1.0);
}

TEST(Architectures, ExpertsAreStackedPerLayer) {
  RandomModelOptions opt;
  opt.arch = "qwen3moe";
  opt.experts = 4;
  opt.experts_used = 2;
  auto m = make("qwen3moe", opt);
  const ModelConfig& c = m->config();
  EXPECT_EQ(c.n_experts, 4);
  EXPECT_EQ(c.n_experts_used, 2);
  const LayerWeights& l = m->weights().layers[1];
  EXPECT_EQ(l.router.rows, 4);
  EXPECT_EQ(l.gate_exps.rows, 4 * c.ffn_dim);
  EXPECT_EQ(l.down_exps.rows, 4 * c.dim);
  const WeightTensor e2 = expert_rows(l.up_exps, 4, 2);
  EXPECT_EQ(e2.rows, c.ffn_dim);
  EXPECT_EQ(static_cast<const uint8_t*>(e2.data), static_cast<const uint8_t*>(l.up_exps.data) + l.up_exps.bytes / 2);
  EXPECT_FALSE(l.w_gate.present());
  // Mixtral: a llama file with experts.
  opt.arch = "llama";
  auto mx = make("mixtral", opt);
  EXPECT_EQ(mx->config().n_experts, 4);
  opt.arch = "qwen3moe";
  opt.experts = 0;
  opt.experts_used = 0;
  EXPECT_THROW(make("qwen3moe-dense", opt), Error);
}

TEST(Architectures, SameSeedSameBytesWhateverTheThreads) {
  for (const char* arch : {"gemma3", "phi3", "qwen3moe"}) {
    RandomModelOptions opt;
    opt.arch = arch;
    opt.shape = *named_model_shape("tiny");
    opt.type = GgmlType::Q8_0;
    opt.seed = 99;
    opt.longrope = opt.arch == "phi3";
    if (opt.arch == "qwen3moe") opt.experts = 4, opt.experts_used = 2;
    opt.progress = false;
    const std::string a = testing::scratch_dir() + "/det-a.gguf", b = testing::scratch_dir() + "/det-b.gguf";
    opt.threads = 1;
    write_random_model(a, opt);
    opt.threads = 3;
    write_random_model(b, opt);
    EXPECT_EQ(testing::read_bytes(a), testing::read_bytes(b)) << arch;
  }
}

TEST(Architectures, AnUnsupportedArchitectureIsNamedInTheError) {
  GgufWriter w;
  w.set("general.architecture", gguf_string("mamba"));
  const std::string path = testing::scratch_dir() + "/mamba.gguf";
  w.begin(path);
  w.finish();
  try {
    ModelFile::open(path);
    FAIL() << "a mamba file loaded";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("architecture 'mamba' is not supported"), std::string::npos) << what;
    EXPECT_NE(what.find("gemma3"), std::string::npos) << what;
    EXPECT_NE(what.find("docs/models.md"), std::string::npos) << what;
  }
}

}  // namespace
}  // namespace seer
