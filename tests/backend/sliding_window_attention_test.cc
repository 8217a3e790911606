// Paged attention with a sliding window and soft-capped scores (Gemma 2/3) against
// a direct computation: each query at position p weighs positions
// max(0, p - window + 1) .. p only, with scores cap * tanh(s / cap).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "backend/paged_attention.h"
#include "backend/paged_kv_storage.h"

namespace seer {
namespace {

struct Case {
  int window;
  float softcap;
  float scale;
};

class SlidingWindowAttention : public ::testing::TestWithParam<Case> {};

TEST_P(SlidingWindowAttention, MatchesDirectComputation) {
  const Case cs = GetParam();
  const int n_heads = 4, n_kv = 2, hd = 16, bs = 4, len = 37;
  const int group = n_heads / n_kv;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  const int blocks = (len + bs - 1) / bs;
  PagedKvStorage kv(KvShape{1, n_kv, hd, bs, KvType::F32}, blocks + 3, 0);
  ForwardSequence seq;
  for (int b = 0; b < blocks; ++b) seq.block_table.push_back(blocks + 2 - b);  // scattered, reversed
  std::vector<float> keys(static_cast<size_t>(len) * n_kv * hd), values(keys.size());
  for (auto& x : keys) x = 2.0f * u(rng);
  for (auto& x : values) x = u(rng);
  for (int p = 0; p < len; ++p)
    kv.write(seq.block_table[p / bs], p % bs, 0, &keys[static_cast<size_t>(p) * n_kv * hd],
             &values[static_cast<size_t>(p) * n_kv * hd]);
  // The last 11 positions as one prefill chunk, as a decode would see them.
  ForwardBatch batch;
  batch.sequences.push_back(seq);
  const int first = len - 11;
  for (int p = first; p < len; ++p) batch.add(0, 0, p, true);
  std::vector<float> q(batch.size() * n_heads * hd), out(q.size());
  for (auto& x : q) x = u(rng);
  ThreadPool pool(2);
  PagedAttention att(n_heads, n_kv, hd, pool.size(), cs.scale, cs.softcap);
  att.run(pool, batch, kv, 0, q.data(), out.data(), cs.window);

  const float scale = cs.scale > 0 ? cs.scale : 1.0f / std::sqrt(static_cast<float>(hd));
  double max_diff = 0;
  for (size_t t = 0; t < batch.size(); ++t) {
    const int pos = batch.positions[t];
    const int start = cs.window > 0 ? std::max(0, pos - cs.window + 1) : 0;
    for (int h = 0; h < n_heads; ++h) {
      const float* qh = &q[(t * n_heads + h) * hd];
      const int kvh = h / group;
      std::vector<double> w;
      double mx = -1e300;
      for (int j = start; j <= pos; ++j) {
        double s = 0;
        for (int d = 0; d < hd; ++d) s += double(qh[d]) * keys[(static_cast<size_t>(j) * n_kv + kvh) * hd + d];
        s *= scale;
        if (cs.softcap > 0) s = cs.softcap * std::tanh(s / cs.softcap);
        w.push_back(s);
        mx = std::max(mx, s);
      }
      double sum = 0;
      for (auto& x : w) sum += (x = std::exp(x - mx));
      for (int d = 0; d < hd; ++d) {
        double o = 0;
        for (int j = start; j <= pos; ++j)
          o += w[j - start] / sum * values[(static_cast<size_t>(j) * n_kv + kvh) * hd + d];
        max_diff = std::max(max_diff, std::fabs(o - out[(t * n_heads + h) * hd + d]));
      }
    }
  }
  EXPECT_LT(max_diff, 1e-5) << "window " << cs.window << " softcap " << cs.softcap;
}

INSTANTIATE_TEST_SUITE_P(Cases, SlidingWindowAttention,
                         ::testing::Values(Case{0, 0.0f, 0.0f}, Case{8, 0.0f, 0.0f}, Case{5, 0.0f, 0.0f},
                                           Case{1, 0.0f, 0.0f}, Case{8, 1.5f, 0.0f}, Case{0, 2.0f, 0.2f},
                                           Case{64, 0.0f, 0.0f}));

}  // namespace
}  // namespace seer
