// ModelExecutor: StepPlans (with KV operations and split chunks) into batches, and
// per-request sampling that does not depend on the rest of the batch. A request's
// tokens alone and inside a batch (chunked prefills of other requests, different
// orders) must be identical, greedy and with a seed.
#include <algorithm>
#include <cmath>
#include <random>

#include <gtest/gtest.h>

#include "backend/cpu_backend.h"
#include "backend/test_model.h"
#include "common/error.h"
#include "engine/executor_feed.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema_to_gbnf.h"
#include "grammar/grammar_test_util.h"
#include "runtime/model_executor.h"
#include "kv/kv_manager.h"
#include "model/gguf_file.h"
#include "model/model_file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

// Drives the executor by hand: allocates KV for each chunk, fills the plan as the
// engine does (ExecutorFeed), executes, commits.
class Driver {
 public:
  Driver(Backend& be, int host_blocks = 0, HostWork host = {})
      : exec_(be, 99, host),
        kv_(KvConfig{be.block_size(), be.device_blocks(), host_blocks,
                     static_cast<int64_t>(be.kv_bytes_per_token()) * be.block_size()}) {}

  RequestId add(std::vector<int32_t> prompt, SamplingParams p) {
    Request r;
    r.id = next_id_++;
    r.prompt_tokens = std::move(prompt);
    r.sampling = p;
    return table_.add(std::move(r)).id;
  }
  Request& get(RequestId id) { return table_.get(id); }
  // Runs one plan; each chunk is [start, start + n) and samples when it reaches the end.
  void step(const std::vector<std::pair<RequestId, int32_t>>& chunks, std::vector<KvOp> ops = {}) {
    StepPlan plan;
    plan.kv_ops = std::move(ops);
    for (auto [id, n] : chunks) {
      Request& r = table_.get(id);
      const int32_t start = r.num_computed_tokens;
      ASSERT_TRUE(kv_.allocate(id, start + n));
      plan.chunks.push_back({id, start, n, start + n == r.num_tokens()});
      r.num_computed_tokens += n;  // the next chunk of the same request continues here
    }
    for (auto [id, n] : chunks) table_.get(id).num_computed_tokens -= n;
    feed_.fill(plan, table_, kv_);
    StepResult res = exec_.execute(plan);
    EXPECT_GE(res.elapsed_s, 0.0);
    size_t s = 0;
    for (const auto& c : plan.chunks) {
      Request& r = table_.get(c.request);
      r.num_computed_tokens = std::max(r.num_computed_tokens, c.start + c.num_tokens);
      if (!c.sample) continue;
      ASSERT_LT(s, res.sampled.size());
      ASSERT_EQ(res.sampled[s].request, c.request);
      r.output_tokens.push_back(res.sampled[s].token);
      r.output_logprobs.push_back(res.sampled[s].logprob);
      ++s;
    }
    EXPECT_EQ(s, res.sampled.size());
  }
  void finish(RequestId id) {
    kv_.free(id);
    table_.erase(id);
    feed_.forget(id);
  }
  KvManager& kv() { return kv_; }
  ModelExecutor& exec() { return exec_; }

 private:
  ModelExecutor exec_;
  KvManager kv_;
  RequestTable table_;
  ExecutorFeed feed_;
  RequestId next_id_ = 0;
};

std::vector<int32_t> tokens(int n, int vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(n);
  for (auto& x : t) x = static_cast<int32_t>(1 + rng() % (vocab - 1));
  return t;
}

constexpr int kNew = 12;
// Rows per forward pass in these tests: below every weight type's GEMM threshold
// (kernels/matmul.h; F32 switches at 8), so each row's logits come from the dot
// path, which computes a row the same whatever else is in the batch. Above it
// OpenBLAS's sgemm may sum a row differently depending on the batch's row count
// (it did on an AVX-512 Zen machine), and a seeded sample may then differ.
constexpr int32_t kRows = 7;

std::vector<int32_t> alone(Backend& be, const std::vector<int32_t>& prompt, const SamplingParams& p) {
  Driver d(be);
  RequestId a = d.add(prompt, p);
  for (int32_t done = 0, n = static_cast<int32_t>(prompt.size()); done < n; done += kRows)
    d.step({{a, std::min(kRows, n - done)}});
  for (int i = 1; i < kNew; ++i) d.step({{a, 1}});
  return d.get(a).output_tokens;
}

std::vector<int32_t> in_batch(Backend& be, const std::vector<int32_t>& prompt, const SamplingParams& p, int vocab) {
  Driver d(be);
  SamplingParams other;
  other.temperature = 1.3f;  // no seed: drawn from the executor
  RequestId b = d.add(tokens(17, vocab, 2), other);
  RequestId a = d.add(prompt, p);
  RequestId c = d.add(tokens(9, vocab, 3), other);
  const int32_t n = static_cast<int32_t>(prompt.size());
  // A's prompt in four chunks, interleaved with the other requests' work, every
  // step at most kRows rows.
  d.step({{b, 3}, {a, 4}});
  d.step({{c, 4}, {a, 3}});
  d.step({{b, 5}, {c, 2}});
  d.step({{a, 7}});
  d.step({{a, n - 14}});
  for (int i = 1; i < kNew; ++i) {
    if (i % 2) d.step({{c, 1}, {a, 1}, {b, 1}});
    else d.step({{a, 1}, {b, 1}});
  }
  return d.get(a).output_tokens;
}

struct Setting {
  const char* name;
  float temperature;
  std::optional<uint64_t> seed;
};

class SameTokensAloneAndBatched : public ::testing::TestWithParam<Setting> {};

TEST_P(SameTokensAloneAndBatched, RandomModel) {
  for (GgmlType t : {GgmlType::F32, GgmlType::F16}) {
    TestModelSpec s;
    s.type = t;
    s.vocab = 200;
    TestModel m(s);
    CpuBackendOptions o;
    o.kv.device_blocks = 32;
    o.threads = 2;
    auto be = make_cpu_backend(m.config(), m.weights(), o);
    SamplingParams p;
    p.temperature = GetParam().temperature;
    p.seed = GetParam().seed;
    p.top_p = 0.95f;
    auto prompt = tokens(21, 200, 1);
    auto x = alone(*be, prompt, p);
    EXPECT_EQ(x.size(), static_cast<size_t>(kNew));
    EXPECT_EQ(x, in_batch(*be, prompt, p, 200)) << ggml_type_name(t);
  }
}

TEST_P(SameTokensAloneAndBatched, Stories260K) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto model = ModelFile::open(path);
  CpuBackendOptions o;
  o.kv.device_blocks = 32;
  o.threads = 2;
  auto be = make_cpu_backend(*model, o);
  SamplingParams p;
  p.temperature = GetParam().temperature;
  p.seed = GetParam().seed;
  auto prompt = tokens(21, 512, 4);
  EXPECT_EQ(alone(*be, prompt, p), in_batch(*be, prompt, p, 512));
}

INSTANTIATE_TEST_SUITE_P(Sampling, SameTokensAloneAndBatched,
                         ::testing::Values(Setting{"greedy", 0.0f, std::nullopt}, Setting{"seeded", 0.9f, 1234}),
                         [](const auto& info) { return std::string(info.param.name); });

// top_logprobs (issue 51): the alternatives the executor returns are the k largest
// entries of log_softmax over the position's whole logits (the raw distribution,
// whatever temperature and top-k sampled from), within 1e-5.
TEST(ModelExecutor, TopLogprobsEqualLogSoftmaxOfTheFullLogits) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 16;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  auto reference = make_cpu_backend(m.config(), m.weights(), o);
  Driver d(*be);
  SamplingParams p;
  p.temperature = 0.7f;
  p.top_k = 3;
  p.seed = 5;
  p.logprobs = true;
  p.top_logprobs = 5;
  const std::vector<int32_t> prompt = tokens(21, 67, 4);
  RequestId a = d.add(prompt, p);
  StepPlan plan;
  ASSERT_TRUE(d.kv().allocate(a, 21));
  plan.chunks = {{a, 0, 21, true}};
  RequestTable t;
  t.add(d.get(a));
  ExecutorFeed feed;
  feed.fill(plan, t, d.kv());
  StepResult res = d.exec().execute(plan);
  ASSERT_EQ(res.sampled.size(), 1u);
  const SampledToken& s = res.sampled[0];
  ASSERT_EQ(s.top_logprobs.size(), 5u);

  ForwardBatch b;
  b.sequences.push_back(ForwardSequence{{0, 1}});
  for (int32_t i = 0; i < 21; ++i) b.add(0, prompt[static_cast<size_t>(i)], i, i == 20);
  std::vector<float> logits;
  reference->forward(b, logits);
  const auto vocab = static_cast<size_t>(reference->vocab_size());
  ASSERT_EQ(logits.size(), vocab);
  std::vector<double> lsm(vocab);
  double mx = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - mx);
  for (size_t i = 0; i < vocab; ++i) lsm[i] = static_cast<double>(logits[i]) - mx - std::log(sum);
  std::vector<size_t> order(vocab);
  for (size_t i = 0; i < vocab; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](size_t x, size_t y) { return lsm[x] > lsm[y]; });
  for (size_t k = 0; k < 5; ++k) {
    SCOPED_TRACE(k);
    EXPECT_EQ(s.top_logprobs[k].token, static_cast<int32_t>(order[k]));
    EXPECT_NEAR(s.top_logprobs[k].logprob, lsm[order[k]], 1e-5);
  }
  EXPECT_NEAR(s.logprob, lsm[static_cast<size_t>(s.token)], 1e-5);  // the chosen token: raw too
}

TEST(ModelExecutor, TwoChunksOfOneRequestShareItsBlockTable) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 16;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  Driver d(*be);
  RequestId a = d.add(tokens(30, 67, 8), SamplingParams::greedy());
  StepPlan plan;
  ASSERT_TRUE(d.kv().allocate(a, 30));
  plan.chunks = {{a, 20, 10, true}, {a, 0, 20, false}};
  RequestTable t;
  Request r = d.get(a);
  t.add(r);
  ExecutorFeed feed;
  feed.fill(plan, t, d.kv());
  ExecutorState state(be->block_size());
  state.apply(plan);
  std::vector<int32_t> rows;
  ForwardBatch b = build_forward_batch(plan, state, &rows);
  ASSERT_EQ(b.sequences.size(), 1u);
  EXPECT_EQ(b.size(), 30u);
  EXPECT_EQ(b.positions[0], 20);
  EXPECT_EQ(b.positions[10], 0);
  ASSERT_EQ(rows, std::vector<int32_t>{0});
  EXPECT_EQ(b.logit_rows, std::vector<int32_t>{9});
  // Sampling in the middle of the sequence is a malformed plan.
  StepPlan bad;
  bad.chunks = {{a, 0, 10, true}};
  EXPECT_THROW(state.apply(bad), Error);
}

TEST(ModelExecutor, PerformsSwapOpsAndDropsSamplersOfFinishedRequests) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 16;
  o.kv.host_blocks = 8;
  auto be = make_cpu_backend(m.config(), m.weights(), o);
  SamplingParams p;
  p.temperature = 0.7f;
  p.seed = 5;
  auto prompt = tokens(20, 67, 6);
  auto expected = alone(*be, prompt, p);

  Driver d(*be, 8);
  RequestId a = d.add(prompt, p);
  d.step({{a, 20}});
  for (int i = 1; i < 5; ++i) d.step({{a, 1}});
  // Preempt by swapping out, let another request overwrite the device blocks, swap in.
  std::vector<KvOp> out;
  ASSERT_TRUE(d.kv().swap_out(a, out));
  ASSERT_FALSE(out.empty());
  d.step({}, out);
  RequestId b = d.add(tokens(40, 67, 7), p);
  d.step({{b, 40}});
  EXPECT_EQ(d.exec().num_samplers(), 2u);
  d.finish(b);
  std::vector<KvOp> in;
  ASSERT_TRUE(d.kv().swap_in(a, in));
  d.step({{a, 1}}, in);
  EXPECT_EQ(d.exec().num_samplers(), 1u);  // b's sampler is gone
  for (int i = 6; i < kNew; ++i) d.step({{a, 1}});
  EXPECT_EQ(d.get(a).output_tokens, expected);
}

// The masks computed while the forward pass runs are the ones the sampling loop
// computes, and requests sampled in parallel draw what they draw one after another:
// the same tokens either way, under every kind of grammar, alone and beside
// unconstrained requests, and every constrained output a live prefix.
TEST(ModelExecutor, MasksWithTheForwardPassAndParallelSamplingGiveTheSameTokens) {
  const std::string path = seer::testing::source_dir() + "/models/stories260K.gguf";
  auto model = ModelFile::open(path);
  auto tok = tokenizer_from_gguf(*GgufFile::open(path));
  grammar::GrammarCache grammars([&tok] {
    std::vector<std::string> bytes(static_cast<size_t>(tok->vocab_size()));
    for (int32_t id = 0; id < tok->vocab_size(); ++id) bytes[id] = tok->token_bytes(id);
    return std::make_shared<const grammar::TokenTrie>(bytes, tok->end_of_generation_ids());
  });
  const std::vector<std::string> gbnf = {
      grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(
          R"({"type": "object", "properties": {"name": {"type": "string"}, "n": {"type": "integer"},
              "tags": {"type": "array", "items": {"enum": ["a", "b"]}}}, "required": ["name", "n", "tags"],
              "additionalProperties": false})")),
      R"(root ::= "once upon a time" [ a-z]+ "." )",
      R"(root ::= ("yes" | "no") (" " [0-9]+)* )",
  };
  auto run = [&](HostWork host) {
    CpuBackendOptions o;
    o.kv.device_blocks = 64;
    o.threads = 2;
    auto be = make_cpu_backend(*model, o);
    Driver d(*be, 0, host);
    std::vector<RequestId> ids;
    for (size_t i = 0; i < 5; ++i) {
      SamplingParams p;
      p.temperature = i % 2 ? 0.9f : 0.0f;
      p.seed = 11 + i;
      if (i >= 1 && i <= gbnf.size()) p.grammar = grammars.get(gbnf[i - 1]);  // 0 and 4 unconstrained
      ids.push_back(d.add(tokens(5, 512, static_cast<uint32_t>(20 + i)), p));
      d.step({{ids.back(), 5}});
    }
    for (int step = 0; step < 30; ++step) {
      std::vector<std::pair<RequestId, int32_t>> batch;
      for (RequestId id : ids)
        if (d.get(id).output_tokens.empty() || !tok->is_end_of_generation(d.get(id).output_tokens.back()))
          batch.push_back({id, 1});
      if (batch.empty()) break;
      d.step(batch);
    }
    std::vector<std::vector<int32_t>> out;
    for (RequestId id : ids) out.push_back(d.get(id).output_tokens);
    return out;
  };
  const auto overlapped = run(HostWork{GrammarMasks::WithForwardPass, 3});
  EXPECT_EQ(overlapped, run(HostWork{GrammarMasks::AfterForwardPass, 1}));
  for (size_t i = 0; i < gbnf.size(); ++i) {
    std::string text;
    for (int32_t t : overlapped[i + 1])
      if (!tok->is_end_of_generation(t)) text += tok->token_bytes(t);
    EXPECT_FALSE(text.empty()) << i;
    EXPECT_TRUE(grammar::testing::prefix_ok(grammars.get(gbnf[i])->grammar(), text)) << i << ": " << text;
  }
}

}  // namespace
}  // namespace seer
