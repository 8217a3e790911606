// K/V caches stored in f16, bf16, q8_0 and q4_0 against the f32 reference forward pass
// (test_model.h): a prompt in chunks and then token-by-token decodes, with shuffled
// block tables, several sequences in one batch and head sizes 16 and 64.
//
// Tolerance: max |logit - reference| <= tol * (1 + max |reference logit|) with tol
// = 2e-3 for f16 (11-bit significand, relative rounding 2^-11 per stored element)
// and 1.5e-2 for bf16 (8-bit significand, 2^-8); f32 K/V keep 2e-4
// (paged_forward_test.cc). Q8_0 rounds each element to within 1/254 of the largest
// magnitude of its block of 32 (about 4x bf16's RMS error on Gaussian data): 4e-2,
// for 1.5e-2 measured. Each bound is a few times the error measured on these
// models, so a kernel reading the wrong element or slot fails it by orders of
// magnitude; kv_quant_test.cc checks the Q8_0 / Q4_0 kernels against f32 attention
// over the dequantized K/V at 1e-4. Q4_0 (16 levels: a step of max|x| / 8 per block
// of 32, about 16x Q8_0's rounding error): 0.4, for 0.16 measured; a nibble read
// from the wrong half of a block fails it (checked by hand: 0.79 and 0.86).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "backend/cpu_backend.h"
#include "backend/test_model.h"
#include "common/error.h"
#include "model/kv_type.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

double tolerance(KvType t) {
  switch (t) {
    case KvType::F32: return 2e-4;
    case KvType::F16: return 2e-3;
    case KvType::BF16: return 1.5e-2;
    case KvType::Q8_0: return 4e-2;
    case KvType::Q4_0: return 0.4;
  }
  return 0;
}

struct KvCase {
  std::string name;
  KvType type;
  int dim, heads, kv_heads, block_size;
};

class KvTypeForward : public ::testing::TestWithParam<KvCase> {};

// Two sequences: prompts of 29 and 21 tokens in chunks of 8 (both in every pass),
// then decodes of both in one batch; every logit row is checked.
TEST_P(KvTypeForward, ChunkedPrefillAndDecodesMatchTheF32Reference) {
  const KvCase& kc = GetParam();
  TestModelSpec spec;
  spec.dim = kc.dim;
  spec.n_heads = kc.heads;
  spec.n_kv_heads = kc.kv_heads;
  spec.ffn_dim = 96;
  TestModel m(spec);
  const int v = m.config().vocab_size;
  CpuBackendOptions o;
  o.kv.block_size = kc.block_size;
  o.kv.device_blocks = 32;
  o.kv.type = kc.type;
  o.threads = 2;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  ASSERT_EQ(be->kv_bytes_per_token(), kv_bytes_per_token(m.config(), kc.type));

  std::mt19937 rng(7);
  std::vector<int32_t> ids(32);
  std::iota(ids.begin(), ids.end(), 0);
  std::shuffle(ids.begin(), ids.end(), rng);
  const int lens[2] = {40, 32};  // prompt 29 / 21, then 11 decodes each
  const int prompt[2] = {29, 21};
  std::vector<int32_t> tokens[2];
  std::vector<int32_t> table[2];
  for (int s = 0; s < 2; ++s) {
    for (int i = 0; i < lens[s]; ++i) tokens[s].push_back(static_cast<int32_t>(rng() % v));
    const int blocks = (lens[s] + kc.block_size - 1) / kc.block_size;
    table[s].assign(ids.begin() + s * 16, ids.begin() + s * 16 + blocks);
  }
  const std::vector<float> ref[2] = {m.reference_logits(tokens[0]), m.reference_logits(tokens[1])};

  int32_t done[2] = {0, 0};
  double worst = 0;
  std::vector<float> logits;
  while (done[0] < lens[0] || done[1] < lens[1]) {
    ForwardBatch b;
    std::vector<std::pair<int, int32_t>> rows;
    for (int s = 0; s < 2; ++s) {
      if (done[s] >= lens[s]) continue;
      const int step = done[s] < prompt[s] ? std::min(8, prompt[s] - done[s]) : 1;
      const int32_t seq = static_cast<int32_t>(b.sequences.size());
      b.sequences.push_back({table[s]});
      for (int p = done[s]; p < done[s] + step; ++p) {
        b.add(seq, tokens[s][p], p, true);
        rows.push_back({s, p});
      }
      done[s] += step;
    }
    be->forward(b, logits);
    for (size_t r = 0; r < rows.size(); ++r) {
      const auto [s, p] = rows[r];
      double scale = 0, diff = 0;
      for (int i = 0; i < v; ++i) {
        const double want = ref[s][static_cast<size_t>(p) * v + i];
        scale = std::max(scale, std::fabs(want));
        diff = std::max(diff, std::fabs(logits[r * v + i] - want));
      }
      worst = std::max(worst, diff / (1 + scale));
      EXPECT_LE(diff, tolerance(kc.type) * (1 + scale)) << "sequence " << s << " position " << p;
    }
  }
  RecordProperty("worst_relative_error", std::to_string(worst));
}

INSTANTIATE_TEST_SUITE_P(
    KvTypes, KvTypeForward,
    ::testing::Values(KvCase{"f16_gqa_hd16_bs16", KvType::F16, 64, 4, 2, 16},
                      KvCase{"f16_hd64_bs4", KvType::F16, 128, 2, 2, 4},
                      KvCase{"bf16_gqa_hd16_bs16", KvType::BF16, 64, 4, 2, 16},
                      KvCase{"bf16_hd64_bs4", KvType::BF16, 128, 2, 1, 4},
                      KvCase{"f32_hd64_bs16", KvType::F32, 128, 2, 2, 16},
                      KvCase{"q8_0_gqa_hd32_bs16", KvType::Q8_0, 64, 2, 1, 16},
                      KvCase{"q8_0_hd64_bs4", KvType::Q8_0, 128, 2, 2, 4},
                      KvCase{"q4_0_gqa_hd32_bs16", KvType::Q4_0, 64, 2, 1, 16},
                      KvCase{"q4_0_hd64_bs4", KvType::Q4_0, 128, 2, 2, 4}),
    [](const auto& info) { return info.param.name; });

TEST(KvType, SizesAndNames) {
  ModelConfig c;
  c.n_layers = 3;
  c.n_kv_heads = 2;
  c.head_dim = 8;
  EXPECT_EQ(kv_bytes_per_token(c, KvType::F32), size_t{2 * 4 * 3 * 2 * 8});
  EXPECT_EQ(kv_bytes_per_token(c, KvType::F16) * 2, kv_bytes_per_token(c, KvType::F32));
  EXPECT_EQ(kv_bytes_per_token(c, KvType::BF16), kv_bytes_per_token(c, KvType::F16));
  for (KvType t : {KvType::F32, KvType::F16, KvType::BF16}) EXPECT_EQ(parse_kv_type(kv_type_name(t)), t);
  EXPECT_THROW(parse_kv_type("fp8"), Error);
}

TEST(KvType, PoolFromBytesHoldsTwiceTheBlocksInF16) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_bytes = size_t{1} << 20;
  o.kv.type = KvType::F32;
  const int f32_blocks = make_cpu_backend(m.config(), m.weights(), o)->device_blocks();
  o.kv.type = KvType::F16;
  EXPECT_EQ(make_cpu_backend(m.config(), m.weights(), o)->device_blocks(), 2 * f32_blocks);
}

}  // namespace
}  // namespace seer
