// Q8_0 K/V (model/kv_type.h): attention over Q8_0 rows against attention over the
// same K/V in f32, pool sizing from a byte budget, byte-exact swaps and the refusal
// of a head dimension that is not a multiple of 32. The forward pass with Q8_0 K/V
// against the f32 reference model is in kv_type_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"
#include "backend/test_model.h"
#include "common/error.h"
#include "model/kv_type.h"
#include "model/quant.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

struct AttnCase {
  const char* name;
  int n_heads, n_kv_heads, head_dim, block_size;
};

// K/V of `len` positions of one sequence written into an f32 and a Q8_0 pool (the
// same block table), and the values the Q8_0 pool holds (its rows dequantized).
struct TwoPools {
  PagedKvStorage f32, q8;
  std::vector<float> k, v;        // [len][n_kv * hd] as written
  std::vector<float> k_q, v_q;    // the same after a Q8_0 round trip
  TwoPools(const AttnCase& c, int len, int blocks, const std::vector<int32_t>& table, std::mt19937& rng)
      : f32(KvShape{1, c.n_kv_heads, c.head_dim, c.block_size, KvType::F32}, blocks, 0),
        q8(KvShape{1, c.n_kv_heads, c.head_dim, c.block_size, KvType::Q8_0}, blocks, 0) {
    const size_t row = static_cast<size_t>(c.n_kv_heads) * c.head_dim;
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto* x : {&k, &v}) {
      x->resize(row * len);
      for (float& f : *x) f = nd(rng) * (1.0f + 3.0f * (rng() % 4 == 0));  // some larger outliers
    }
    k_q = round_trip(k, c.head_dim);
    v_q = round_trip(v, c.head_dim);
    for (int p = 0; p < len; ++p) {
      f32.write(table[p / c.block_size], p % c.block_size, 0, &k[p * row], &v[p * row]);
      q8.write(table[p / c.block_size], p % c.block_size, 0, &k[p * row], &v[p * row]);
    }
  }
  static std::vector<float> round_trip(const std::vector<float>& x, int hd) {
    std::vector<float> out(x.size());
    std::vector<BlockQ8_0> blocks(hd / kQK);
    for (size_t r = 0; r < x.size(); r += hd) {
      quantize_row_q8_0(&x[r], blocks.data(), hd);
      dequantize_row_q8_0(blocks.data(), &out[r], hd);
    }
    return out;
  }
};

class Q8Attention : public ::testing::TestWithParam<AttnCase> {};

// A prompt of 37 positions in one pass (every query sees a different prefix), so
// scores and value sums run over full and partly masked blocks.
//
// 1. Against attention computed in f32 over the dequantized K/V the Q8_0 kernels
//    differ only by f32 summation order (bound 1e-4 relative).
// 2. Against the f32 K/V the difference is Q8_0's own error, bounded per query: with
//    delta = scale * max_j sum_e |q_e| |k_je - k'_je| (the largest score change) and
//    ev = max |v - v'|, |out - out'| <= (exp(2 delta) - 1) max|v| + ev.
TEST_P(Q8Attention, MatchesF32KvWithinTheQ8Error) {
  const AttnCase& c = GetParam();
  const int len = 37, hd = c.head_dim, group = c.n_heads / c.n_kv_heads;
  const int blocks = (len + c.block_size - 1) / c.block_size;
  std::mt19937 rng(11);
  std::vector<int32_t> table(blocks);
  for (int b = 0; b < blocks; ++b) table[b] = blocks - 1 - b + 2;  // scattered, not 0..n-1
  TwoPools pools(c, len, blocks + 3, table, rng);

  ForwardBatch batch;
  batch.sequences.push_back({table});
  for (int p = 0; p < len; ++p) batch.add(0, 0, p, true);
  const size_t q_row = static_cast<size_t>(c.n_heads) * hd;
  std::vector<float> q(q_row * len);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (float& f : q) f = nd(rng);

  ThreadPool pool(2);
  PagedAttention attn(c.n_heads, c.n_kv_heads, hd, pool.size());
  std::vector<float> out_f32(q.size()), out_q8(q.size()), out_deq(q.size());
  attn.run(pool, batch, pools.f32, 0, q.data(), out_f32.data());
  attn.run(pool, batch, pools.q8, 0, q.data(), out_q8.data());
  PagedKvStorage deq(KvShape{1, c.n_kv_heads, hd, c.block_size, KvType::F32}, blocks + 3, 0);
  const size_t kv_row = static_cast<size_t>(c.n_kv_heads) * hd;
  for (int p = 0; p < len; ++p)
    deq.write(table[p / c.block_size], p % c.block_size, 0, &pools.k_q[p * kv_row], &pools.v_q[p * kv_row]);
  attn.run(pool, batch, deq, 0, q.data(), out_deq.data());

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  double worst_ratio = 0;
  for (int t = 0; t < len; ++t)
    for (int h = 0; h < c.n_heads; ++h) {
      const int kvh = h / group;
      const float* qh = &q[t * q_row + h * hd];
      double delta = 0, ev = 0, vmax = 0;
      for (int j = 0; j <= t; ++j) {
        const size_t r = j * kv_row + kvh * hd;
        double ds = 0;
        for (int e = 0; e < hd; ++e) {
          ds += std::fabs(qh[e]) * std::fabs(pools.k[r + e] - pools.k_q[r + e]);
          ev = std::max<double>(ev, std::fabs(pools.v[r + e] - pools.v_q[r + e]));
          vmax = std::max<double>(vmax, std::fabs(pools.v[r + e]));
        }
        delta = std::max(delta, scale * ds);
      }
      const double bound = std::expm1(2 * delta) * vmax + ev + 1e-5;
      for (int e = 0; e < hd; ++e) {
        const size_t i = t * q_row + h * hd + e;
        ASSERT_NEAR(out_q8[i], out_deq[i], 1e-4 * (1 + std::fabs(out_deq[i]))) << "token " << t << " head " << h;
        ASSERT_LE(std::fabs(out_q8[i] - out_f32[i]), bound) << "token " << t << " head " << h << " elem " << e;
        worst_ratio = std::max(worst_ratio, std::fabs(out_q8[i] - out_f32[i]) / bound);
      }
    }
  RecordProperty("worst_error_over_bound", std::to_string(worst_ratio));
}

INSTANTIATE_TEST_SUITE_P(Shapes, Q8Attention,
                         ::testing::Values(AttnCase{"gqa_hd64_bs16", 8, 2, 64, 16},
                                           AttnCase{"hd128_bs16", 2, 2, 128, 16},
                                           AttnCase{"gqa_hd32_bs4", 4, 1, 32, 4},
                                           AttnCase{"hd96_bs8", 3, 3, 96, 8}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(KvQ8_0, SizesAndName) {
  ModelConfig c;
  c.n_layers = 3;
  c.n_kv_heads = 2;
  c.head_dim = 64;
  EXPECT_EQ(kv_bytes_per_token(c, KvType::Q8_0), size_t{2 * 3 * 2 * 2 * 34});
  EXPECT_DOUBLE_EQ(kv_bytes_per_element(KvType::Q8_0), 34.0 / 32.0);
  EXPECT_EQ(parse_kv_type("q8_0"), KvType::Q8_0);
  EXPECT_STREQ(kv_type_name(KvType::Q8_0), "q8_0");
  try {
    (void)parse_kv_type("q4", "--kv-type");
    FAIL() << "q4 was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("f32, f16, bf16 or q8_0, got 'q4'"), std::string::npos) << e.what();
  }
}

TEST(KvQ8_0, HeadDimensionNotAMultipleOf32IsRefused) {
  TestModelSpec spec;  // dim 64, 4 heads: head dimension 16
  TestModel m(spec);
  CpuBackendOptions o;
  o.kv.type = KvType::Q8_0;
  o.kv.device_blocks = 4;
  try {
    (void)make_cpu_backend(m.config(), m.weights(), o);
    FAIL() << "a head dimension of 16 was accepted for q8_0";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("head dimension is 16"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)kv_bytes_per_token(m.config(), KvType::Q8_0), Error);
  EXPECT_THROW(PagedKvStorage(KvShape{1, 1, 48, 16, KvType::Q8_0}, 1, 0), Error);
}

// The same byte budget holds 64/34 (1.88x) the blocks of f16: the pool is sized
// from kv_bytes_per_token, which counts Q8_0 blocks, not elements.
TEST(KvQ8_0, PoolFromBytesHoldsAbout1Point9TimesTheF16Blocks) {
  TestModelSpec spec;
  spec.n_heads = 2;  // head dimension 32
  TestModel m(spec);
  CpuBackendOptions o;
  o.kv.device_bytes = size_t{1} << 20;
  o.kv.type = KvType::F16;
  const int f16_blocks = make_cpu_backend(m.config(), m.weights(), o)->device_blocks();
  o.kv.type = KvType::Q8_0;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  const size_t block_bytes = kv_bytes_per_token(m.config(), KvType::Q8_0) * o.kv.block_size;
  EXPECT_EQ(be->device_blocks(), static_cast<int>(o.kv.device_bytes / block_bytes));
  EXPECT_EQ(be->kv_block_bytes(), block_bytes);
  EXPECT_NEAR(static_cast<double>(be->device_blocks()) / f16_blocks, 64.0 / 34.0, 0.01);
}

// Device -> host -> device, a device copy and a whole-block read / host write (the
// shared tier's path) keep every byte, scales included.
TEST(KvQ8_0, SwapsAndCopiesKeepTheBytes) {
  const KvShape shape{3, 2, 64, 16, KvType::Q8_0};
  PagedKvStorage kv(shape, 4, 2);
  ASSERT_EQ(kv.block_bytes(), size_t{3 * 2 * 2 * 16 * 2 * 34});
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 2.0f);
  std::vector<float> k(2 * 64), v(2 * 64);
  for (int l = 0; l < 3; ++l)
    for (int s = 0; s < 16; ++s) {
      for (float& f : k) f = nd(rng);
      for (float& f : v) f = nd(rng);
      kv.write(1, s, l, k.data(), v.data());
    }
  std::vector<char> orig(kv.block_bytes()), got(kv.block_bytes());
  kv.read_block(false, 1, orig.data());
  kv.swap_out(1, 0);
  kv.swap_in(0, 3);
  kv.read_block(false, 3, got.data());
  EXPECT_EQ(std::memcmp(orig.data(), got.data(), orig.size()), 0);
  for (int l = 0; l < 3; ++l) kv.run_layer(KvOp{KvOpKind::Copy, 3, 2}, l);
  kv.read_block(false, 2, got.data());
  EXPECT_EQ(std::memcmp(orig.data(), got.data(), orig.size()), 0);
  kv.write_host_block(1, orig.data());
  kv.read_block(true, 1, got.data());
  EXPECT_EQ(std::memcmp(orig.data(), got.data(), orig.size()), 0);
  for (int l = 0; l < 3; ++l) kv.run_layer(KvOp{KvOpKind::SwapIn, 1, 0}, l);
  kv.read_block(false, 0, got.data());
  EXPECT_EQ(std::memcmp(orig.data(), got.data(), orig.size()), 0);
}

}  // namespace
}  // namespace seer
