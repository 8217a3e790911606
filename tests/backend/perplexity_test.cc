// seer perplexity's scheme (runtime/perplexity.h), checked on a backend whose logits
// are a known function of each token, then on a real model (batch invariance).
#include "runtime/perplexity.h"

#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "test_model.h"

namespace seer {
namespace {

// Logits of a row: logit[v] = ((token * 7 + position * 3 + v * 5) % 11) / 4. Records
// every batch it is given.
class TableBackend : public Backend {
 public:
  static constexpr int kVocab = 13;
  std::vector<ForwardBatch> batches;

  static float logit(int32_t token, int32_t pos, int v) {
    return static_cast<float>((token * 7 + pos * 3 + v * 5) % 11) / 4.0f;
  }
  std::string name() const override { return "table"; }
  int vocab_size() const override { return kVocab; }
  int block_size() const override { return 16; }
  int device_blocks() const override { return 64; }
  int host_blocks() const override { return 0; }
  size_t kv_bytes_per_token() const override { return 0; }
  void forward(const ForwardBatch& b, std::vector<float>& logits) override {
    batches.push_back(b);
    logits.assign(b.logit_rows.size() * kVocab, 0.0f);
    for (size_t i = 0; i < b.logit_rows.size(); ++i)
      for (int v = 0; v < kVocab; ++v)
        logits[i * kVocab + v] = logit(b.tokens[b.logit_rows[i]], b.positions[b.logit_rows[i]], v);
  }
  void copy_device_block(int32_t, int32_t) override { throw std::logic_error("unused"); }
  void swap_out(int32_t, int32_t) override { throw std::logic_error("unused"); }
  void swap_in(int32_t, int32_t) override { throw std::logic_error("unused"); }
  size_t kv_block_bytes() const override { return 0; }
  void read_kv_block(bool, int32_t, void*) const override { throw std::logic_error("unused"); }
  void write_host_kv_block(int32_t, const void*) override { throw std::logic_error("unused"); }
};

std::vector<int32_t> stream(int n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[static_cast<size_t>(i)] = (i * 5 + 3) % TableBackend::kVocab;
  return t;
}

TEST(Perplexity, ScoresTheSecondHalfOfEachWholeChunkAsLlamaPerplexity) {
  TableBackend backend;
  const std::vector<int32_t> tokens = stream(70);  // 4 whole chunks of 16, 6 tokens dropped
  PerplexityOptions o;
  o.ctx = 16;
  o.batch = 5;
  o.bos = 12;
  const PerplexityResult r = perplexity(backend, tokens, o);

  double nll = 0;
  int count = 0;
  std::vector<double> running;
  for (int c = 0; c < 4; ++c) {
    for (int p = 8; p <= 14; ++p) {  // logits at ctx/2 .. ctx-2 predict the next token
      const int32_t tok = tokens[static_cast<size_t>(c * 16 + p)];
      std::vector<float> l(TableBackend::kVocab);
      for (int v = 0; v < TableBackend::kVocab; ++v) l[static_cast<size_t>(v)] = TableBackend::logit(tok, p, v);
      double z = 0;
      for (float x : l) z += std::exp(static_cast<double>(x));
      nll -= static_cast<double>(l[static_cast<size_t>(tokens[static_cast<size_t>(c * 16 + p + 1)])]) - std::log(z);
      ++count;
    }
    running.push_back(std::exp(nll / count));
  }
  EXPECT_EQ(r.scored, 28);
  EXPECT_EQ(r.tokens, 70);
  ASSERT_EQ(r.running.size(), 4u);
  // seer exponentiates in f32 as llama-perplexity does; this sum is all f64.
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(r.running[i], running[i], 1e-6 * running[i]);
  EXPECT_NEAR(r.perplexity, std::exp(nll / count), 1e-6 * r.perplexity);
  EXPECT_GT(r.stderr_ppl, 0.0);

  // Every chunk starts from position 0 with BOS in place of its first token, in
  // passes of at most `batch` tokens that cover positions 0..15 once.
  ASSERT_EQ(backend.batches.size(), 4u * 4u);
  for (size_t i = 0; i < backend.batches.size(); ++i) {
    const ForwardBatch& b = backend.batches[i];
    EXPECT_LE(b.size(), 5u);
    EXPECT_EQ(b.positions.front(), static_cast<int32_t>(i % 4) * 5);
    if (i % 4 == 0) {
      EXPECT_EQ(b.tokens.front(), 12);
    }
  }
}

TEST(Perplexity, NeedsTwoChunksOfText) {
  TableBackend backend;
  PerplexityOptions o;
  o.ctx = 16;
  EXPECT_THROW((void)perplexity(backend, stream(31), o), Error);
  o.chunks = 1;
  const PerplexityResult r = perplexity(backend, stream(32), o);
  EXPECT_EQ(r.running.size(), 1u);
  EXPECT_EQ(r.perplexity, r.running[0]);
}

TEST(Perplexity, RealModelGivesTheSameValueInAnyPassSize) {
  testing::TestModelSpec spec;
  spec.vocab = 67;
  testing::TestModel model(spec);
  CpuBackendOptions bo;
  bo.threads = 2;
  bo.kv.device_blocks = 4;
  auto backend = make_cpu_backend(model.config(), model.weights(), bo);
  std::vector<int32_t> tokens(200);
  for (size_t i = 0; i < tokens.size(); ++i) tokens[i] = static_cast<int32_t>((i * 31 + 7) % 67);
  PerplexityOptions o;
  o.ctx = 64;
  o.bos = 1;
  o.batch = 64;
  const double whole = perplexity(*backend, tokens, o).perplexity;
  o.batch = 7;
  const double pieces = perplexity(*backend, tokens, o).perplexity;
  EXPECT_TRUE(std::isfinite(whole));
  EXPECT_GT(whole, 1.0);
  EXPECT_NEAR(whole, pieces, 1e-4 * whole);
}

}  // namespace
}  // namespace seer
