// The paged, batched CPU forward pass against the plain contiguous reference
// (test_model.h), for every chunking of a prompt, interleavings of several
// sequences with shuffled block tables, the two-range case, and KV moves.
//
// Tolerance: max |logit - reference| <= 2e-4 * (1 + max |reference logit|) for F32,
// F16 and BF16 weights (both see the same f32 weight values; only summation order
// differs), and every chunking agrees with the whole-prompt pass within the same
// bound. For the quantized types the backend rounds activations to Q8 / Q8_K (as
// llama.cpp) and the reference does not: 5e-2 * (1 + max |ref|) against the reference (rounding is
// discontinuous, so f32-order differences between batch shapes can flip a
// rounding and the chunkings only agree to that bound too).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "backend/cpu_backend.h"
#include "backend/test_model.h"
#include "common/error.h"
#include "kernels/dot_kernels.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

struct Part {
  int seq;
  int32_t begin, end;  // positions
};

struct Seq {
  std::vector<int32_t> tokens;
  std::vector<int32_t> table;
};

// Runs one forward pass over `parts` (tokens optionally shuffled across the whole
// batch) and returns the logits of every token, keyed by (seq, position).
std::map<std::pair<int, int32_t>, std::vector<float>> run(Backend& be, const std::vector<Seq>& seqs,
                                                          const std::vector<Part>& parts, std::mt19937* shuffle) {
  struct Tok {
    int seq;
    int32_t pos;
  };
  std::vector<Tok> toks;
  for (const Part& p : parts)
    for (int32_t pos = p.begin; pos < p.end; ++pos) toks.push_back({p.seq, pos});
  if (shuffle) std::shuffle(toks.begin(), toks.end(), *shuffle);
  ForwardBatch b;
  std::map<int, int32_t> seq_index;
  for (const Tok& t : toks) {
    auto [it, inserted] = seq_index.emplace(t.seq, static_cast<int32_t>(b.sequences.size()));
    if (inserted) b.sequences.push_back({seqs[t.seq].table});
    b.add(it->second, seqs[t.seq].tokens[t.pos], t.pos, true);
  }
  std::vector<float> logits;
  be.forward(b, logits);
  const int v = be.vocab_size();
  std::map<std::pair<int, int32_t>, std::vector<float>> out;
  for (size_t i = 0; i < toks.size(); ++i)
    out[{toks[i].seq, toks[i].pos}] = std::vector<float>(logits.begin() + i * v, logits.begin() + (i + 1) * v);
  return out;
}

double scale_of(const std::vector<float>& ref, size_t pos, int v) {
  double m = 0;
  for (int i = 0; i < v; ++i) m = std::max(m, std::fabs(double(ref[pos * v + i])));
  return 1 + m;
}

double max_diff(const std::vector<float>& got, const std::vector<float>& ref, size_t pos, int v) {
  double d = 0;
  for (int i = 0; i < v; ++i) d = std::max(d, std::fabs(double(got[i]) - ref[pos * v + i]));
  return d;
}

std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(rng() % vocab);
  return t;
}

std::vector<int32_t> shuffled_blocks(int n, uint32_t seed) {
  std::vector<int32_t> ids(n);
  std::iota(ids.begin(), ids.end(), 0);
  std::mt19937 rng(seed);
  std::shuffle(ids.begin(), ids.end(), rng);
  return ids;
}

// Types whose matmuls round the activations to 8 bits (integer dot kernels); the
// other block formats are widened to f32 and multiplied with f32 activations.
bool quantized(GgmlType t) { return is_quantized(t); }

struct Variant {
  std::string name;
  TestModelSpec spec;
  int block_size;
};

class PagedForward : public ::testing::TestWithParam<Variant> {
 protected:
  double ref_tol() const { return quantized(GetParam().spec.type) ? 5e-2 : 2e-4; }
  std::unique_ptr<Backend> backend(const TestModel& m, int blocks = 64) {
    CpuBackendOptions o;
    o.kv.block_size = GetParam().block_size;
    o.kv.device_blocks = blocks;
    o.kv.host_blocks = 16;
    o.kv.type = KvType::F32;  // f16/bf16 K/V have their own tolerances (kv_type_test.cc)
    o.threads = 2;
    return make_cpu_backend(m.config(), m.weights(), o);
  }
};

TEST_P(PagedForward, EveryChunkingMatchesTheReference) {
  TestModel m(GetParam().spec);
  const int v = m.config().vocab_size, bs = GetParam().block_size;
  const int L = 37;
  Seq s{random_tokens(L, v, 5), {}};
  const auto ref = m.reference_logits(s.tokens);
  std::vector<std::vector<float>> whole;
  for (int chunk : {L, 1, 2, 3, 7, 16}) {
    auto be = backend(m);
    auto ids = shuffled_blocks(be->device_blocks(), 100 + chunk);
    s.table.assign(ids.begin(), ids.begin() + (L + bs - 1) / bs);
    std::vector<Seq> seqs{s};
    for (int32_t p0 = 0; p0 < L; p0 += chunk) {
      auto out = run(*be, seqs, {{0, p0, std::min(L, p0 + chunk)}}, nullptr);
      for (auto& [key, got] : out) {
        const int32_t pos = key.second;
        EXPECT_LE(max_diff(got, ref, pos, v), ref_tol() * scale_of(ref, pos, v)) << "chunk " << chunk << " pos " << pos;
        if (chunk == L) {
          whole.push_back(got);
        } else if (!quantized(GetParam().spec.type)) {  // batch shape matters only through f32 rounding
          std::vector<float> w = whole[pos];
          EXPECT_LE(max_diff(got, std::vector<float>(w), 0, v), 2e-4 * scale_of(w, 0, v)) << chunk << " " << pos;
        }
      }
    }
  }
}

TEST_P(PagedForward, InterleavedSequencesWithShuffledTables) {
  TestModel m(GetParam().spec);
  const int v = m.config().vocab_size, bs = GetParam().block_size;
  auto be = backend(m, 48);
  auto ids = shuffled_blocks(be->device_blocks(), 9);
  std::vector<Seq> seqs;
  std::vector<std::vector<float>> refs;
  size_t next_block = 0;
  for (int len : {23, 37, 11}) {
    Seq s{random_tokens(len, v, 10 + len), {}};
    for (int b = 0; b < (len + bs - 1) / bs; ++b) s.table.push_back(ids[next_block++]);
    refs.push_back(m.reference_logits(s.tokens));
    seqs.push_back(std::move(s));
  }
  std::mt19937 rng(4);
  std::vector<int32_t> done(seqs.size(), 0);
  int checked = 0;
  for (int step = 0; step < 100; ++step) {
    std::vector<Part> parts;
    for (size_t i = 0; i < seqs.size(); ++i) {
      const int32_t len = static_cast<int32_t>(seqs[i].tokens.size());
      if (done[i] >= len) continue;
      const int32_t n = std::min<int32_t>(len - done[i], 1 + rng() % 8);
      parts.push_back({static_cast<int>(i), done[i], done[i] + n});
      done[i] += n;
    }
    if (parts.empty()) break;
    for (auto& [key, got] : run(*be, seqs, parts, &rng)) {
      const auto& ref = refs[key.first];
      EXPECT_LE(max_diff(got, ref, key.second, v), ref_tol() * scale_of(ref, key.second, v))
          << "seq " << key.first << " pos " << key.second;
      ++checked;
    }
  }
  EXPECT_EQ(checked, 23 + 37 + 11);
}

TEST_P(PagedForward, TwoRangesOfOneSequenceInOneBatch) {
  // [0, b) computed, then the blocks of [0, a) are dropped (replaced by blocks full
  // of another sequence's K/V), then one batch recomputes [0, a) and adds [b, c).
  TestModel m(GetParam().spec);
  const int v = m.config().vocab_size, bs = GetParam().block_size;
  const int32_t a = 2 * 16, b = 2 * 16 + 11, c = b + 9;  // a is block-aligned for bs 4 and 16
  auto be = backend(m);
  auto ids = shuffled_blocks(be->device_blocks(), 21);
  Seq s{random_tokens(c, v, 77), {}};
  const int nblocks = (c + bs - 1) / bs;
  s.table.assign(ids.begin(), ids.begin() + nblocks);
  Seq other{random_tokens(a, v, 78), {}};
  other.table.assign(ids.begin() + nblocks, ids.begin() + nblocks + a / bs);
  std::vector<Seq> seqs{s, other};
  run(*be, seqs, {{0, 0, b}}, nullptr);
  run(*be, seqs, {{1, 0, a}}, nullptr);
  for (int j = 0; j < a / bs; ++j) seqs[0].table[j] = other.table[j];  // "dropped" leading blocks
  const auto ref = m.reference_logits(s.tokens);
  std::mt19937 rng(3);
  auto out = run(*be, seqs, {{0, b, c}, {0, 0, a}}, &rng);
  ASSERT_EQ(out.size(), static_cast<size_t>(a + (c - b)));
  for (auto& [key, got] : out)
    EXPECT_LE(max_diff(got, ref, key.second, v), ref_tol() * scale_of(ref, key.second, v)) << "pos " << key.second;
}

TEST_P(PagedForward, SwapOutSwapInAndCopyPreserveTheCache) {
  TestModel m(GetParam().spec);
  const int v = m.config().vocab_size, bs = GetParam().block_size;
  auto be = backend(m);
  const int32_t L = 30, first = 20;
  Seq s{random_tokens(L, v, 55), {}};
  const int nb = (L + bs - 1) / bs;
  for (int j = 0; j < nb; ++j) s.table.push_back(j);
  Seq clobber{random_tokens(nb * bs, v, 56), s.table};
  std::vector<Seq> seqs{s, clobber};
  run(*be, seqs, {{0, 0, first}}, nullptr);
  const int used = (first + bs - 1) / bs;
  for (int j = 0; j < used; ++j) be->swap_out(s.table[j], j);
  run(*be, seqs, {{1, 0, nb * bs}}, nullptr);  // overwrite the device blocks
  for (int j = 0; j < used; ++j) {
    seqs[0].table[j] = 40 + j;
    be->swap_in(j, 40 + j);
  }
  for (int j = 0; j < nb; ++j) {  // and move everything once more, by copy
    be->copy_device_block(seqs[0].table[j], 50 + j);
    seqs[0].table[j] = 50 + j;
  }
  const auto ref = m.reference_logits(s.tokens);
  for (auto& [key, got] : run(*be, seqs, {{0, first, L}}, nullptr))
    EXPECT_LE(max_diff(got, ref, key.second, v), ref_tol() * scale_of(ref, key.second, v)) << "pos " << key.second;
}

TestModelSpec spec(GgmlType t, bool bias, bool neox, int dim = 64, int heads = 4, int kv = 2, double rope = 1.0,
                   int ffn = 96) {
  TestModelSpec s;
  s.ffn_dim = ffn;
  s.type = t;
  s.qkv_bias = bias;
  s.rope_neox = neox;
  s.dim = dim;
  s.n_heads = heads;
  s.n_kv_heads = kv;
  s.rope_factor = rope;
  return s;
}

INSTANTIATE_TEST_SUITE_P(
    Models, PagedForward,
    ::testing::Values(Variant{"f32_gqa_adjacent_bs16", spec(GgmlType::F32, false, false), 16},
                      Variant{"f32_gqa_bias_neox_bs4", spec(GgmlType::F32, true, true), 4},
                      Variant{"f32_mqa_hd64_bs16", spec(GgmlType::F32, false, false, 128, 2, 1), 16},
                      Variant{"f16_hd64_group4_neox_bs16", spec(GgmlType::F16, true, true, 256, 4, 1), 16},
                      Variant{"bf16_group4_linear_rope_bs4", spec(GgmlType::BF16, false, false, 64, 8, 2, 2.0), 4},
                      Variant{"q8_0_gqa_bs16", spec(GgmlType::Q8_0, false, false), 16},
                      Variant{"q4_0_gqa_bias_bs4", spec(GgmlType::Q4_0, true, true), 4},
                      // The other block formats (K-quants need rows of 256 elements).
                      Variant{"q4_1_gqa_bs16", spec(GgmlType::Q4_1, false, false), 16},
                      Variant{"q5_0_gqa_bias_bs4", spec(GgmlType::Q5_0, true, false), 4},
                      Variant{"q5_1_gqa_bs16", spec(GgmlType::Q5_1, false, false), 16},
                      Variant{"iq4_nl_gqa_bs16", spec(GgmlType::IQ4_NL, false, false), 16},
                      Variant{"q2_k_hd64_bs16", spec(GgmlType::Q2_K, false, false, 256, 4, 2, 1.0, 512), 16},
                      Variant{"q3_k_hd64_bs16", spec(GgmlType::Q3_K, false, false, 256, 4, 2, 1.0, 512), 16},
                      Variant{"q4_k_hd64_bias_bs4", spec(GgmlType::Q4_K, true, false, 256, 4, 2, 1.0, 512), 4},
                      Variant{"q5_k_hd64_bs16", spec(GgmlType::Q5_K, false, true, 256, 4, 2, 1.0, 512), 16},
                      Variant{"q6_k_hd64_bs16", spec(GgmlType::Q6_K, false, false, 256, 4, 2, 1.0, 512), 16},
                      Variant{"iq4_xs_hd64_bs16", spec(GgmlType::IQ4_XS, false, false, 256, 4, 2, 1.0, 512), 16}),
    [](const auto& info) { return info.param.name; });

TEST(PagedForwardErrors, RejectsMalformedBatches) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 4;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  std::vector<float> logits;
  auto batch = [] {
    ForwardBatch b;
    b.sequences.push_back({{0, 1}});
    b.add(0, 1, 0, true);
    return b;
  };
  EXPECT_NO_THROW(be->forward(batch(), logits));
  auto b = batch();
  b.tokens[0] = 67;  // vocab is 67
  EXPECT_THROW(be->forward(b, logits), Error);
  b = batch();
  b.positions[0] = 32;  // needs a third block
  EXPECT_THROW(be->forward(b, logits), Error);
  b = batch();
  b.sequences[0].block_table = {7};
  EXPECT_THROW(be->forward(b, logits), Error);
  b = batch();
  b.sequences[0].block_table = {-1};
  EXPECT_THROW(be->forward(b, logits), Error);
  b = batch();
  b.logit_rows = {1};
  EXPECT_THROW(be->forward(b, logits), Error);
  b = batch();
  b.seq_index[0] = 1;
  EXPECT_THROW(be->forward(b, logits), Error);
  EXPECT_THROW(be->swap_out(0, 0), Error);  // no host tier
  EXPECT_THROW(be->copy_device_block(0, 4), Error);
}

TEST(PagedForwardErrors, RejectsUnsupportedRopeScaling) {
  TestModelSpec s;
  TestModel m(s);
  ModelConfig c = m.config();
  c.rope_scaling.type = "yarn";
  EXPECT_THROW(make_cpu_backend(c, m.weights(), CpuBackendOptions{}), Error);
}

}  // namespace
}  // namespace seer
