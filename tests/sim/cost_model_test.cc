#include "sim/cost_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "common/error.h"

namespace seer {
namespace {

class CostModelTest : public ::testing::Test {
 protected:
  Catalog catalog = Catalog::load(Catalog::default_dir());
  CostModel make(const char* model, const char* hw, int tp = 1) {
    CostModelOptions o;
    o.tp = tp;
    return CostModel(catalog.model(model), catalog.hardware(hw), o);
  }
};

TEST_F(CostModelTest, DecodeOfLlama2_7bOnA100IsAboutWeightBytesOverBandwidth) {
  CostModel m = make("Llama-2-7B", "A100-80GB");
  double weights = m.weight_bytes();
  EXPECT_NEAR(weights / 1e9, 13.5, 0.1);  // 6.74 B parameters in FP16
  double bound = weights / catalog.hardware("A100-80GB").memory_bandwidth;  // 6.6 ms
  double t = m.decode_time(1, 128);
  EXPECT_GT(t, bound);
  EXPECT_LT(t - catalog.hardware("A100-80GB").iteration_overhead_s, 2.0 * bound)
      << "the forward pass of decode at batch 1 should be dominated by streaming the weights";
  // Precisely: the weights at the achievable bandwidth, the fixed overhead and the
  // launch floor of the five elementwise kernels per block (two norms, RoPE,
  // activation, residual add); the K/V of 128 tokens and the LM head's one row are a
  // few percent.
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  double expected = weights / (hw.memory_bandwidth * hw.efficiency.memory) + hw.iteration_overhead_s +
                    m.model().layers * 5 * hw.kernel_latency_s;
  EXPECT_NEAR(t / expected, 1.0, 0.03);
}

TEST_F(CostModelTest, LongPrefillIsComputeBound) {
  CostModel m = make("Llama-2-7B", "A100-80GB");
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  double flops = 2.0 * 4096 * m.model().layer_linear_params() * m.model().layers;
  double t = m.prefill_time(4096);
  EXPECT_GT(t, flops / hw.peak_flops / hw.efficiency.compute);
  EXPECT_LT(t, 1.5 * flops / hw.peak_flops / hw.efficiency.compute);
}

TEST_F(CostModelTest, TimeGrowsWithTokensAndWithContext) {
  CostModel m = make("Llama-2-13B", "A100-80GB");
  double prev = 0;
  for (int tokens : {1, 16, 64, 256, 512, 1024, 2048, 4096, 8192}) {
    double t = m.prefill_time(tokens);
    EXPECT_GE(t, prev) << tokens;
    prev = t;
  }
  EXPECT_GT(m.prefill_time(8192), 4 * m.prefill_time(1024));
  prev = 0;
  for (int ctx : {1, 128, 1024, 4096}) {
    double t = m.decode_time(32, ctx);
    EXPECT_GT(t, prev) << ctx;
    prev = t;
  }
  prev = 0;
  for (int batch : {1, 8, 64, 256}) {
    double t = m.decode_time(batch, 1024);
    EXPECT_GT(t, prev) << batch;
    prev = t;
  }
  EXPECT_GT(m.prefill_time(256, 3000), m.prefill_time(256, 0));
}

TEST_F(CostModelTest, TensorParallelismReducesTimeAndAddsAllReduce) {
  CostModel tp1 = make("Llama-2-13B", "A100-80GB", 1);
  CostModel tp2 = make("Llama-2-13B", "A100-80GB", 2);
  CostModel tp4 = make("Llama-2-13B", "A100-80GB", 4);
  EXPECT_LT(tp2.decode_time(16, 1024), tp1.decode_time(16, 1024));
  EXPECT_LT(tp4.decode_time(16, 1024), tp2.decode_time(16, 1024));
  EXPECT_LT(tp2.prefill_time(2048), tp1.prefill_time(2048));
  IterationShape s;
  s.chunks.push_back({512, 0, true});
  EXPECT_EQ(tp1.breakdown(s).all_reduce_s, 0.0);
  EXPECT_GT(tp2.breakdown(s).all_reduce_s, 0.0);
  // Weights split over the devices; K/V heads too.
  EXPECT_NEAR(double(tp2.weight_bytes_per_device()) / tp1.weight_bytes_per_device(), 0.5, 0.01);
  EXPECT_EQ(tp2.kv_bytes_per_token_per_device() * 2, tp1.kv_bytes_per_token_per_device());
}

TEST_F(CostModelTest, KvHeadsAreReplicatedWhenFewerThanDevices) {
  CostModel tp8 = make("Llama-2-70B", "A100-80GB", 8);  // 8 K/V heads
  CostModel tp4 = make("Llama-2-70B", "A100-80GB", 4);
  EXPECT_EQ(tp8.kv_bytes_per_token_per_device() * 2, tp4.kv_bytes_per_token_per_device());
  EXPECT_EQ(tp8.kv_bytes_per_token(), int64_t{2} * 80 * 8 * 128 * 2);
  EXPECT_LT(tp8.decode_time(64, 2048), tp4.decode_time(64, 2048));
}

TEST_F(CostModelTest, EachDeviceKeepsAtLeastOneKvHead) {
  // Llama-2-70B has 8 K/V heads; at TP 16 each device still holds one whole K/V head
  // (replicated across pairs), never half of one: 80 layers x K and V x 1 head x 128 x 2 B.
  CostModel tp16 = make("Llama-2-70B", "A100-80GB", 16);
  EXPECT_EQ(tp16.kv_bytes_per_token_per_device(), 40960);
  EXPECT_EQ(tp16.kv_bytes_per_token_per_device(), make("Llama-2-70B", "A100-80GB", 8).kv_bytes_per_token_per_device());
}

TEST_F(CostModelTest, RejectsImpossibleConfigurations) {
  EXPECT_THROW(make("Llama-2-70B", "A100-80GB", 1), Error);  // 138 GB of weights
  EXPECT_THROW(make("Llama-2-7B", "A100-80GB", 3), Error);   // 32 heads
  EXPECT_NO_THROW(make("Llama-2-70B", "H200", 1));
}

TEST_F(CostModelTest, KernelRegimesSwitchEfficiencyAndFormByRowCount) {
  HardwareSpec hw = catalog.hardware("A100-80GB");
  hw.kernel_latency_s = 0;
  const ModelSpec& model = catalog.model("Llama-2-7B");
  const double k = model.hidden, n = model.hidden;  // the O projection
  auto out_proj = [&](const HardwareSpec& h, double tokens) {
    return CostModel(model, h, {}).layer_op_times(tokens)[static_cast<size_t>(LayerOp::OutProj)];
  };
  const double mem = k * n * 2.0 / hw.memory_bandwidth, flop = 2.0 * k * n / hw.peak_flops;  // per token
  hw.linear_regimes = {{1, 0.5, 0.25, 2.0}, {32, 1.0, 1.0, 1.0}};
  // Below 32 rows the 2-norm of memory and compute time, at that regime's efficiencies.
  EXPECT_DOUBLE_EQ(out_proj(hw, 1), std::hypot(mem / 0.5, flop / 0.25));
  EXPECT_DOUBLE_EQ(out_proj(hw, 31), std::hypot(mem / 0.5, 31 * flop / 0.25));
  // From 32 rows the other kernel: memory then compute.
  EXPECT_DOUBLE_EQ(out_proj(hw, 32), mem + 32 * flop);
  // Below the first listed regime the hardware's own efficiencies apply, summed.
  hw.linear_regimes = {{8, 1.0, 1.0, 64.0}};
  EXPECT_DOUBLE_EQ(out_proj(hw, 4), mem / hw.efficiency.memory + 4 * flop / hw.efficiency.compute);
}

TEST_F(CostModelTest, SwapCostsBytesOverTheHostLink) {
  CostModel m = make("Llama-2-7B", "A100-80GB");
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  IterationShape s;
  s.swap_bytes = int64_t{1} << 30;
  CostBreakdown b = m.breakdown(s);
  EXPECT_DOUBLE_EQ(b.swap_s, double(int64_t{1} << 30) / (hw.host_link_bandwidth * hw.efficiency.host_link));
  EXPECT_EQ(b.linear_s, 0.0);
  EXPECT_DOUBLE_EQ(b.total(), b.swap_s + hw.iteration_overhead_s);
}

TEST_F(CostModelTest, SwapsOverlapTheLayersPerLayerMaxOfCopyAndCompute) {
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  const double link = hw.host_link_bandwidth * hw.efficiency.host_link;
  CostModel piped = make("Llama-2-7B", "A100-80GB");
  CostModelOptions serial_opts;
  serial_opts.pipelined_swaps = false;
  CostModel serial(catalog.model("Llama-2-7B"), hw, serial_opts);
  const double layers = catalog.model("Llama-2-7B").layers;

  IterationShape s;
  s.chunks.push_back({1024, 512, true});
  const CostBreakdown none = piped.breakdown(s);
  const double compute = none.linear_s + none.attention_s + none.all_reduce_s;
  ASSERT_GT(compute, 0.0);

  // A copy shorter than the compute, per layer: only the first layer's copy shows.
  s.swap_bytes = static_cast<int64_t>(0.5 * compute * link);
  const double swap_s = double(s.swap_bytes) / link;
  EXPECT_NEAR(piped.breakdown(s).swap_s, swap_s / layers, 1e-12);
  EXPECT_NEAR(serial.breakdown(s).swap_s, swap_s, 1e-12);
  EXPECT_NEAR(piped.iteration_time(s), none.total() + swap_s / layers, 1e-12);

  // A copy longer than the compute: only the last layer's compute shows.
  s.swap_bytes = static_cast<int64_t>(3.0 * compute * link);
  const double long_s = double(s.swap_bytes) / link;
  EXPECT_NEAR(piped.iteration_time(s) - hw.iteration_overhead_s - none.lm_head_s, long_s + compute / layers, 1e-12);
  EXPECT_NEAR(serial.iteration_time(s), none.total() + long_s, 1e-12);

  // Nothing to hide behind: the whole copy.
  IterationShape only_swap;
  only_swap.swap_bytes = s.swap_bytes;
  EXPECT_NEAR(piped.breakdown(only_swap).swap_s, long_s, 1e-12);
}

TEST_F(CostModelTest, MixedBatchCostsAtLeastItsParts) {
  CostModel m = make("Mistral-7B", "H100-80GB");
  IterationShape mixed;
  for (int i = 0; i < 32; ++i) mixed.chunks.push_back({1, 700, true});
  mixed.chunks.push_back({480, 0, false});
  double t = m.iteration_time(mixed);
  EXPECT_GE(t, m.decode_time(32, 701));
  EXPECT_GE(t, m.prefill_time(480));
  EXPECT_LT(t, m.decode_time(32, 701) + m.prefill_time(480));  // weights are read once
}

TEST_F(CostModelTest, ProfileGivesATokenBudgetThatMeetsTheSlo) {
  CostModel m = make("Llama-2-7B", "A100-80GB");
  double t512 = profile_iteration_time(m, 512, 1024);
  double t2048 = profile_iteration_time(m, 2048, 1024);
  EXPECT_LT(t512, t2048);
  EXPECT_GT(t512, m.decode_time(1, 1024));
  // Decodes reading 50k tokens of K/V (26 GB) add about 26 GB / achievable bandwidth.
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  double kv_read = 50000.0 * m.kv_bytes_per_token() / (hw.memory_bandwidth * hw.efficiency.attention_memory);
  EXPECT_NEAR(profile_iteration_time(m, 512, 1024, 50000) - t512, kv_read, 0.05 * kv_read);
}

// A long chunk's attention is compute-bound: per layer 4 FLOPs (QK^T and PV, a
// multiply-add each) per head dimension per causal (query, key) pair, at the
// attention kernels' compute efficiency.
TEST_F(CostModelTest, ComputeBoundAttentionCostsItsExactFlopCount) {
  CostModel m = make("Llama-2-7B", "A100-80GB");
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  const ModelSpec& spec = m.model();
  const double q = 2048, before = 1024;
  const double pairs = q * before + q * (q + 1) / 2;
  const double flops = 4.0 * spec.heads * spec.head_dim * pairs;
  const double compute_s = spec.layers * flops / (hw.peak_flops * hw.efficiency.attention_compute);
  IterationShape s;
  s.chunks.push_back(ChunkShape{2048, 1024, true});
  const CostBreakdown b = m.breakdown(s);
  const double kv_bytes = spec.layers * (before + 2 * q) * 2.0 * spec.kv_heads * spec.head_dim * 2;
  ASSERT_GT(compute_s, kv_bytes / (hw.memory_bandwidth * hw.efficiency.attention_memory)) << "not compute-bound";
  EXPECT_NEAR(b.attention_s / compute_s, 1.0, 1e-12);
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

TEST(CostModelGrammar, AConstrainedShareAddsTheMasksOfTheBusiestSamplingThreadAndNothingElse) {
  Catalog catalog = Catalog::load(Catalog::default_dir());
  const ModelSpec& model = catalog.model("Llama-2-7B");
  const HardwareSpec& hw = catalog.hardware("A100-80GB");
  IterationShape s;
  s.chunks.assign(32, ChunkShape{1, 511, true});
  s.chunks.push_back({256, 0, false});  // a prompt chunk samples nothing
  CostModelOptions plain;
  CostModelOptions half = plain;
  half.constrained_share = 0.5;
  const CostBreakdown a = CostModel(model, hw, plain).breakdown(s);
  const CostBreakdown b = CostModel(model, hw, half).breakdown(s);
  const double row = model.vocab * half.mask_s_per_vocab_entry;
  EXPECT_EQ(a.grammar_s, 0.0);
  // 16 expected constrained rows over 8 sampling threads: two rows' time.
  EXPECT_DOUBLE_EQ(b.grammar_s, 2 * row);
  EXPECT_NEAR(b.total() - a.total(), b.grammar_s, 1e-12);
  CostModelOptions one_thread = half;
  one_thread.sampling_threads = 1;
  EXPECT_DOUBLE_EQ(CostModel(model, hw, one_thread).breakdown(s).grammar_s, 16 * row);
  // One sampled row, constrained half the time: half a row's time, whatever the threads.
  IterationShape single;
  single.chunks.assign(1, ChunkShape{1, 511, true});
  EXPECT_DOUBLE_EQ(CostModel(model, hw, half).breakdown(single).grammar_s, 0.5 * row);
  EXPECT_DOUBLE_EQ(CostModel(model, hw, one_thread).breakdown(single).grammar_s, 0.5 * row);
  // 32k vocabulary: 12.8 µs per constrained row, what bench_grammar_mask measured warm.
  EXPECT_NEAR(model.vocab * half.mask_s_per_vocab_entry, 12.8e-6, 0.1e-6);
}

}  // namespace
}  // namespace seer
