// Q8_0 and Q4_0 K/V (model/kv_type.h): attention over quantized rows against
// attention over the same K/V in f32, each vector path of the kernels against the
// scalar one, pool sizing from a byte budget, byte-exact swaps and the refusal of a
// head dimension that is not a multiple of 32. The forward pass with quantized K/V
// against the f32 reference model is in kv_type_test.cc.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "backend/cpu_backend.h"
#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"
#include "backend/quant_kv_attention.h"
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
  KvType type;
  int n_heads, n_kv_heads, head_dim, block_size;
};

// A row of hd elements stored as `type` and read back (the model's quantizers).
std::vector<float> round_trip_row(KvType type, const float* x, int hd) {
  std::vector<float> out(hd);
  if (type == KvType::Q8_0) {
    std::vector<BlockQ8_0> blocks(hd / kQK);
    quantize_row_q8_0(x, blocks.data(), hd);
    dequantize_row_q8_0(blocks.data(), out.data(), hd);
  } else {
    std::vector<BlockQ4_0> blocks(hd / kQK);
    quantize_row_q4_0(x, blocks.data(), hd);
    dequantize_row_q4_0(blocks.data(), out.data(), hd);
  }
  return out;
}

// K/V of `len` positions of one sequence written into an f32 and a quantized pool
// (the same block table), and the values the quantized pool holds (its rows
// dequantized).
struct TwoPools {
  PagedKvStorage f32, quant;
  std::vector<float> k, v;        // [len][n_kv * hd] as written
  std::vector<float> k_q, v_q;    // the same after a round trip through c.type
  TwoPools(const AttnCase& c, int len, int blocks, const std::vector<int32_t>& table, std::mt19937& rng)
      : f32(KvShape{1, c.n_kv_heads, c.head_dim, c.block_size, KvType::F32}, blocks, 0),
        quant(KvShape{1, c.n_kv_heads, c.head_dim, c.block_size, c.type}, blocks, 0) {
    const size_t row = static_cast<size_t>(c.n_kv_heads) * c.head_dim;
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (auto* x : {&k, &v}) {
      x->resize(row * len);
      for (float& f : *x) f = nd(rng) * (1.0f + 3.0f * (rng() % 4 == 0));  // some larger outliers
    }
    k_q = round_trip(c.type, k, c.head_dim);
    v_q = round_trip(c.type, v, c.head_dim);
    for (int p = 0; p < len; ++p) {
      f32.write(table[p / c.block_size], p % c.block_size, 0, &k[p * row], &v[p * row]);
      quant.write(table[p / c.block_size], p % c.block_size, 0, &k[p * row], &v[p * row]);
    }
  }
  static std::vector<float> round_trip(KvType type, const std::vector<float>& x, int hd) {
    std::vector<float> out(x.size());
    for (size_t r = 0; r < x.size(); r += hd) {
      const std::vector<float> row = round_trip_row(type, &x[r], hd);
      std::copy(row.begin(), row.end(), out.begin() + static_cast<std::ptrdiff_t>(r));
    }
    return out;
  }
};

class QuantKvAttention : public ::testing::TestWithParam<AttnCase> {};

// A prompt of 37 positions in one pass (every query sees a different prefix), so
// scores and value sums run over full and partly masked blocks.
//
// 1. Against attention computed in f32 over the dequantized K/V the Q8_0 / Q4_0
//    kernels differ only by f32 summation order (bound 1e-4 relative).
// 2. Against the f32 K/V the difference is the type's own rounding, bounded per
//    query (the bound holds for any rounding: it is computed from the errors): with
//    delta = scale * max_j sum_e |q_e| |k_je - k'_je| (the largest score change) and
//    ev = max |v - v'|, |out - out'| <= (exp(2 delta) - 1) max|v| + ev.
TEST_P(QuantKvAttention, MatchesF32KvWithinTheRoundingError) {
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
  std::vector<float> out_f32(q.size()), out_quant(q.size()), out_deq(q.size());
  attn.run(pool, batch, pools.f32, 0, q.data(), out_f32.data());
  attn.run(pool, batch, pools.quant, 0, q.data(), out_quant.data());
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
        ASSERT_NEAR(out_quant[i], out_deq[i], 1e-4 * (1 + std::fabs(out_deq[i]))) << "token " << t << " head " << h;
        ASSERT_LE(std::fabs(out_quant[i] - out_f32[i]), bound) << "token " << t << " head " << h << " elem " << e;
        worst_ratio = std::max(worst_ratio, std::fabs(out_quant[i] - out_f32[i]) / bound);
      }
    }
  RecordProperty("worst_error_over_bound", std::to_string(worst_ratio));
}

INSTANTIATE_TEST_SUITE_P(Shapes, QuantKvAttention,
                         ::testing::Values(AttnCase{"q8_0_gqa_hd64_bs16", KvType::Q8_0, 8, 2, 64, 16},
                                           AttnCase{"q8_0_hd128_bs16", KvType::Q8_0, 2, 2, 128, 16},
                                           AttnCase{"q8_0_gqa_hd32_bs4", KvType::Q8_0, 4, 1, 32, 4},
                                           AttnCase{"q8_0_hd96_bs8", KvType::Q8_0, 3, 3, 96, 8},
                                           AttnCase{"q4_0_gqa_hd64_bs16", KvType::Q4_0, 8, 2, 64, 16},
                                           AttnCase{"q4_0_hd128_bs16", KvType::Q4_0, 2, 2, 128, 16},
                                           AttnCase{"q4_0_gqa_hd32_bs4", KvType::Q4_0, 4, 1, 32, 4},
                                           AttnCase{"q4_0_hd96_bs8", KvType::Q4_0, 3, 3, 96, 8}),
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
    EXPECT_NE(std::string(e.what()).find("f32, f16, bf16, q8_0 or q4_0, got 'q4'"), std::string::npos) << e.what();
  }
}

TEST(KvQ4_0, SizesAndName) {
  ModelConfig c;
  c.n_layers = 3;
  c.n_kv_heads = 2;
  c.head_dim = 64;
  EXPECT_EQ(kv_bytes_per_token(c, KvType::Q4_0), size_t{2 * 3 * 2 * 2 * 18});
  EXPECT_DOUBLE_EQ(kv_bytes_per_element(KvType::Q4_0), 18.0 / 32.0);
  EXPECT_EQ(parse_kv_type("q4_0"), KvType::Q4_0);
  EXPECT_STREQ(kv_type_name(KvType::Q4_0), "q4_0");
}

void expect_head_dim_16_refused(KvType type) {
  TestModelSpec spec;  // dim 64, 4 heads: head dimension 16
  TestModel m(spec);
  CpuBackendOptions o;
  o.kv.type = type;
  o.kv.device_blocks = 4;
  try {
    (void)make_cpu_backend(m.config(), m.weights(), o);
    FAIL() << "a head dimension of 16 was accepted for " << kv_type_name(type);
  } catch (const Error& e) {
    const std::string want = std::string("KV type ") + kv_type_name(type) +
                             " stores head rows in blocks of 32 elements, but this model's head dimension is 16";
    EXPECT_NE(std::string(e.what()).find(want), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)kv_bytes_per_token(m.config(), type), Error);
  EXPECT_THROW(PagedKvStorage(KvShape{1, 1, 48, 16, type}, 1, 0), Error);
}

TEST(KvQ8_0, HeadDimensionNotAMultipleOf32IsRefused) { expect_head_dim_16_refused(KvType::Q8_0); }
TEST(KvQ4_0, HeadDimensionNotAMultipleOf32IsRefused) { expect_head_dim_16_refused(KvType::Q4_0); }

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

// 64/18 (3.56x) for Q4_0.
TEST(KvQ4_0, PoolFromBytesHoldsAbout3Point6TimesTheF16Blocks) {
  TestModelSpec spec;
  spec.n_heads = 2;  // head dimension 32
  TestModel m(spec);
  CpuBackendOptions o;
  o.kv.device_bytes = size_t{1} << 20;
  o.kv.type = KvType::F16;
  const int f16_blocks = make_cpu_backend(m.config(), m.weights(), o)->device_blocks();
  o.kv.type = KvType::Q4_0;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  const size_t block_bytes = kv_bytes_per_token(m.config(), KvType::Q4_0) * o.kv.block_size;
  EXPECT_EQ(be->device_blocks(), static_cast<int>(o.kv.device_bytes / block_bytes));
  EXPECT_EQ(be->kv_block_bytes(), block_bytes);
  EXPECT_NEAR(static_cast<double>(be->device_blocks()) / f16_blocks, 64.0 / 18.0, 0.01);
}

// Device -> host -> device, a device copy and a whole-block read / host write (the
// shared tier's path) keep every byte, scales included.
void expect_swaps_keep_bytes(KvType type) {
  const KvShape shape{3, 2, 64, 16, type};
  PagedKvStorage kv(shape, 4, 2);
  ASSERT_EQ(kv.block_bytes(), size_t{3 * 2 * 2 * 16 * 2} * kv_type_block_bytes(type));
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

TEST(KvQ8_0, SwapsAndCopiesKeepTheBytes) { expect_swaps_keep_bytes(KvType::Q8_0); }
TEST(KvQ4_0, SwapsAndCopiesKeepTheBytes) { expect_swaps_keep_bytes(KvType::Q4_0); }

// Every vector path this build has (AVX-512, AVX2) against the scalar path, which
// reads each quant through the format's definition (model/quant.h dequantizers are
// checked to agree with it here too): nq 1..8 queries, head dims 32..160, partial
// blocks. Only the f32 summation order differs: 2e-5 relative to the sum of |terms|.
template <class B>
void expect_paths_match_scalar(KvType type) {
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int hd : {32, 64, 96, 128, 160}) {
    const int nb = hd / kQK, bs = 16;
    std::vector<B> rows(static_cast<size_t>(bs) * nb);
    std::vector<float> x(hd), deq(static_cast<size_t>(bs) * hd);
    for (int j = 0; j < bs; ++j) {
      for (float& f : x) f = nd(rng) * (1.0f + 4.0f * (rng() % 5 == 0));
      if constexpr (std::is_same_v<B, BlockQ8_0>) {
        quantize_row_q8_0(x.data(), &rows[static_cast<size_t>(j) * nb], hd);
        dequantize_row_q8_0(&rows[static_cast<size_t>(j) * nb], &deq[static_cast<size_t>(j) * hd], hd);
      } else {
        quantize_row_q4_0(x.data(), &rows[static_cast<size_t>(j) * nb], hd);
        dequantize_row_q4_0(&rows[static_cast<size_t>(j) * nb], &deq[static_cast<size_t>(j) * hd], hd);
      }
    }
    std::vector<std::vector<float>> q(8, std::vector<float>(hd)), p(8, std::vector<float>(bs));
    for (auto& r : q) for (float& f : r) f = nd(rng);
    for (auto& r : p) for (float& f : r) f = std::fabs(nd(rng));
    for (int nq = 1; nq <= 8; ++nq) {
      const float* qp[8];
      const float* pp[8];
      for (int i = 0; i < 8; ++i) qp[i] = q[i].data(), pp[i] = p[i].data();
      std::vector<std::vector<float>> ref_s(nq, std::vector<float>(bs));
      std::vector<std::vector<float>> ref_o(nq, std::vector<float>(hd, 0.5f));
      float* rs[8];
      float* ro[8];
      for (int i = 0; i < nq; ++i) rs[i] = ref_s[i].data(), ro[i] = ref_o[i].data();
      const int count = 11;  // a partly filled block
      quant_block_scores(nq, qp, rows.data(), hd, bs, 0.25f, rs, QuantKvIsa::Scalar);
      quant_block_values(nq, pp, rows.data(), count, hd, ro, QuantKvIsa::Scalar);
      // The scalar path is the dequantized rows' dot products.
      for (int i = 0; i < nq; ++i) {
        for (int j = 0; j < bs; ++j) {
          double want = 0, mag = 0;
          for (int e = 0; e < hd; ++e) {
            want += static_cast<double>(q[i][e]) * deq[static_cast<size_t>(j) * hd + e];
            mag += std::fabs(q[i][e] * deq[static_cast<size_t>(j) * hd + e]);
          }
          ASSERT_NEAR(ref_s[i][j], 0.25 * want, 0.25 * 2e-5 * mag) << kv_type_name(type) << " hd " << hd;
        }
        for (int e = 0; e < hd; ++e) {
          double want = 0.5, mag = 0.5;
          for (int j = 0; j < count; ++j) {
            want += p[i][j] * static_cast<double>(deq[static_cast<size_t>(j) * hd + e]);
            mag += std::fabs(p[i][j] * deq[static_cast<size_t>(j) * hd + e]);
          }
          ASSERT_NEAR(ref_o[i][e], want, 2e-5 * mag) << kv_type_name(type) << " hd " << hd;
        }
      }
      for (QuantKvIsa isa : {QuantKvIsa::Avx2, QuantKvIsa::Avx512}) {
        if (!quant_kv_isa_available(isa)) continue;
        SCOPED_TRACE(std::string(kv_type_name(type)) + " " + quant_kv_isa_name(isa) + " hd " + std::to_string(hd) +
                     " nq " + std::to_string(nq));
        std::vector<std::vector<float>> got_s(nq, std::vector<float>(bs));
        std::vector<std::vector<float>> got_o(nq, std::vector<float>(hd, 0.5f));
        float* gs[8];
        float* go[8];
        for (int i = 0; i < nq; ++i) gs[i] = got_s[i].data(), go[i] = got_o[i].data();
        quant_block_scores(nq, qp, rows.data(), hd, bs, 0.25f, gs, isa);
        quant_block_values(nq, pp, rows.data(), count, hd, go, isa);
        for (int i = 0; i < nq; ++i) {
          for (int j = 0; j < bs; ++j) {
            double mag = 0;
            for (int e = 0; e < hd; ++e) mag += std::fabs(q[i][e] * deq[static_cast<size_t>(j) * hd + e]);
            ASSERT_NEAR(got_s[i][j], ref_s[i][j], 0.25 * 2e-5 * mag) << "query " << i << " row " << j;
          }
          for (int e = 0; e < hd; ++e) {
            double mag = 0.5;
            for (int j = 0; j < count; ++j) mag += std::fabs(p[i][j] * deq[static_cast<size_t>(j) * hd + e]);
            ASSERT_NEAR(got_o[i][e], ref_o[i][e], 2e-5 * mag) << "query " << i << " elem " << e;
          }
        }
      }
    }
  }
}

TEST(QuantKvKernels, VectorPathsMatchTheScalarPathQ8_0) { expect_paths_match_scalar<BlockQ8_0>(KvType::Q8_0); }
TEST(QuantKvKernels, VectorPathsMatchTheScalarPathQ4_0) { expect_paths_match_scalar<BlockQ4_0>(KvType::Q4_0); }

}  // namespace
}  // namespace seer
