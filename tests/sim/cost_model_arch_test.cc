// The cost model's sliding-window layers (attention capped at the window) and
// mixtures of experts (FLOPs of the chosen experts, bytes of the experts touched).
#include <gtest/gtest.h>

#include "model/model_config.h"
#include "sim/cost_model.h"

namespace seer {
namespace {

class CostModelArchTest : public ::testing::Test {
 protected:
  Catalog catalog = Catalog::load(Catalog::default_dir());
  CostModel make(const ModelSpec& m) {
    CostModelOptions o;
    o.check_fits = false;  // 8 experts of Mistral-7B's FFN need more than 80 GB
    return CostModel(m, catalog.hardware("A100-80GB"), o);
  }
  double attention(const CostModel& m, int tokens, int before) {
    IterationShape s;
    s.chunks.push_back({tokens, before, true});
    return m.breakdown(s).attention_s;
  }
};

TEST_F(CostModelArchTest, SlidingWindowCapsAttentionOfLocalLayers) {
  ModelSpec dense = catalog.model("Mistral-7B");
  ModelSpec swa = dense;
  swa.sliding_window = 1024;
  swa.local_layers = dense.layers;  // every layer local
  ModelSpec mixed = swa;
  mixed.local_layers = dense.layers / 2;
  const CostModel a = make(dense), b = make(swa), c = make(mixed);
  // Inside the window nothing changes.
  EXPECT_DOUBLE_EQ(attention(a, 1, 500), attention(b, 1, 500));
  EXPECT_DOUBLE_EQ(attention(a, 200, 300), attention(b, 200, 300));
  // A decode at context 16k reads 1024 positions per local layer instead of 16k.
  const double full = attention(a, 1, 16383), capped = attention(b, 1, 16383);
  EXPECT_LT(capped, full / 8);
  EXPECT_NEAR(capped, attention(a, 1, 1023), 1e-12);
  // Half the layers local: halfway between.
  EXPECT_NEAR(attention(c, 1, 16383), (full + capped) / 2, 1e-9);
  // K/V storage is not reduced (seer keeps local layers' K/V for the whole sequence).
  EXPECT_EQ(a.kv_bytes_per_token(), b.kv_bytes_per_token());
}

TEST_F(CostModelArchTest, MixtureOfExpertsCountsActiveFlopsAndTouchedBytes) {
  ModelSpec dense = catalog.model("Mistral-7B");
  ModelSpec moe = dense;
  moe.experts = 8;
  moe.experts_used = 2;
  const CostModel a = make(dense), b = make(moe);
  // All experts are stored: 8x the FFN weights, plus a router.
  const int64_t ffn_params = 3LL * dense.hidden * dense.ffn;
  EXPECT_EQ(moe.parameter_count() - dense.parameter_count(), 7 * ffn_params * dense.layers + 8LL * dense.hidden * dense.layers);
  // Decode at batch 1 reads two experts' weights: the FFN costs about 2x the dense one.
  const auto dense_ops = a.layer_op_times(1), moe_ops = b.layer_op_times(1);
  const double dense_ffn = dense_ops[size_t(LayerOp::UpProj)] + dense_ops[size_t(LayerOp::DownProj)];
  const double moe_ffn = moe_ops[size_t(LayerOp::UpProj)] + moe_ops[size_t(LayerOp::DownProj)];
  EXPECT_NEAR(moe_ffn / dense_ffn, 2.0, 0.1);
  // A large batch touches every expert (8x the bytes) but its FLOPs are those of two.
  const auto big = b.layer_op_times(4096), big_dense = a.layer_op_times(4096);
  EXPECT_GT(big[size_t(LayerOp::DownProj)], 1.5 * big_dense[size_t(LayerOp::DownProj)]);
  EXPECT_LT(big[size_t(LayerOp::DownProj)], 8.0 * big_dense[size_t(LayerOp::DownProj)]);
}

TEST_F(CostModelArchTest, ModelSpecFromConfigCarriesWindowAndExperts) {
  ModelConfig c;
  c.n_layers = 12;
  c.dim = 64;
  c.n_heads = 4;
  c.n_kv_heads = 4;
  c.head_dim = 16;
  c.ffn_dim = 128;
  c.vocab_size = 300;
  c.context_length = 4096;
  c.sliding_window = 512;
  c.swa_period = 6;
  c.n_experts = 4;
  c.n_experts_used = 2;
  const ModelSpec m = model_spec_from_config(c);
  EXPECT_EQ(m.sliding_window, 512);
  EXPECT_EQ(m.local_layers, 10);  // layers 5 and 11 are global
  EXPECT_EQ(m.experts, 4);
  EXPECT_EQ(m.experts_used, 2);
}

}  // namespace
}  // namespace seer
