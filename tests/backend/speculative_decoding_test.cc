// Speculative decoding with prompt-lookup drafts (docs/speculative.md): the real
// engine, scheduler and ModelExecutor give the same tokens with and without drafts,
// greedy and seeded, alone and in a batch, while the drafts are verified in the
// batched forward pass and some are accepted (so the comparison is not vacuous).
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "backend/cpu_backend.h"
#include "backend/test_model.h"
#include "common/clock.h"
#include "kernels/matmul.h"
#include "engine/draft_proposer.h"
#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "model/model_file.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

struct Outputs {
  std::vector<std::vector<int32_t>> tokens;
  std::vector<std::vector<float>> logprobs;
  EngineCounters counters;
  int32_t max_plan_tokens = 0;
};

class Recorder : public EngineObserver {
 public:
  void on_finished(const Request& r) override {
    tokens[r.external_id] = r.output_tokens;
    logprobs[r.external_id] = r.output_logprobs;
  }
  void on_plan(const StepPlan& plan) override { max_plan_tokens = std::max(max_plan_tokens, plan.num_tokens()); }
  std::map<std::string, std::vector<int32_t>> tokens;
  std::map<std::string, std::vector<float>> logprobs;
  int32_t max_plan_tokens = 0;
};

// A step's time as t0 + per_token * tokens instead of the measured one, so the gate's
// decisions, and with them the batch shapes, do not depend on how busy the machine is.
struct StepTimeModel {
  double t0_s = 0.0, per_token_s = 0.0;
};

// The real forward pass, timed by a StepTimeModel.
class ModelledStepTime : public Executor {
 public:
  ModelledStepTime(Executor& inner, StepTimeModel model) : inner_(inner), model_(model) {}
  StepResult execute(const StepPlan& plan) override {
    StepResult r = inner_.execute(plan);
    r.elapsed_s = model_.t0_s + model_.per_token_s * plan.num_tokens();
    return r;
  }
  bool simulated() const override { return inner_.simulated(); }
  bool needs_request_data() const override { return inner_.needs_request_data(); }

 private:
  Executor& inner_;
  StepTimeModel model_;
};

// Serves `prompts` at once (a batch) on a fresh engine; `drafter` null: no speculation.
// The gate (engine/speculation_gate.h) is off unless `gate` is set: these tests check
// the verification, which needs drafts verified whatever they are worth. The gate
// sees the steps timed by `*gate`.
Outputs serve(Backend& be, const std::vector<std::vector<int32_t>>& prompts, const SamplingParams& p,
              DraftProposer* drafter, int32_t token_budget = 64, const std::string& policy = "sarathi",
              std::optional<StepTimeModel> gate = std::nullopt) {
  KvManager kv(KvConfig{be.block_size(), be.device_blocks(), 0,
                        static_cast<int64_t>(be.kv_bytes_per_token()) * be.block_size()});
  SchedulerConfig sc;
  sc.policy = policy;
  sc.token_budget = token_budget;
  auto scheduler = make_scheduler(sc);
  ModelExecutor model_executor(be, 7);
  ModelledStepTime timed(model_executor, gate.value_or(StepTimeModel{}));
  Executor& executor = gate ? static_cast<Executor&>(timed) : model_executor;
  VirtualClock clock;
  EngineConfig ec;
  ec.check_invariants = true;
  ec.drafter = drafter;
  ec.speculation_gate.enabled = gate.has_value();
  ec.max_model_len = 512;
  Engine engine(*scheduler, executor, kv, clock, ec);
  Recorder rec;
  engine.set_observer(&rec);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r;
    r.external_id = std::to_string(i);
    r.prompt_tokens = prompts[i];
    r.sampling = p;
    r.sampling.logprobs = true;
    r.sampling.ignore_eos = true;
    engine.add_request(std::move(r));
  }
  while (engine.has_unfinished()) engine.step();
  Outputs out;
  for (size_t i = 0; i < prompts.size(); ++i) {
    out.tokens.push_back(rec.tokens.at(std::to_string(i)));
    out.logprobs.push_back(rec.logprobs.at(std::to_string(i)));
  }
  out.counters = engine.counters();
  out.max_plan_tokens = rec.max_plan_tokens;
  EXPECT_EQ(kv.usage().device.used(), 0);
  return out;
}

// The dot-product path at every batch, where a row's logits do not depend on how many
// rows the pass has (docs/speculative.md, "one caveat is numeric"). Speculation changes
// the rows of a pass, and on the GEMM path (F32 from 8 rows: the prompt's chunks)
// OpenBLAS's SkylakeX kernels give a row other bits for another row count: measured on
// stories260K, logprobs 2e-4 apart and then greedy tokens that differ, where its Haswell
// kernels (OPENBLAS_CORETYPE=Haswell) happened to give the same bits.
std::unique_ptr<Backend> on_dot_path(std::unique_ptr<Backend> be) {
  static_cast<CpuBackend&>(*be).matmul().set_path(MatmulPath::Dot);
  return be;
}

// A prompt that repeats a phrase, so its n-grams recur (an input-grounded task).
std::vector<int32_t> repetitive_prompt(int vocab, uint32_t seed, int phrase, int repeats) {
  std::mt19937 rng(seed);
  std::vector<int32_t> words(static_cast<size_t>(phrase));
  for (auto& w : words) w = static_cast<int32_t>(1 + rng() % static_cast<uint32_t>(vocab - 1));
  std::vector<int32_t> t;
  for (int r = 0; r < repeats; ++r) t.insert(t.end(), words.begin(), words.end());
  return t;
}

// `alone`: one request, so each accepted draft saves an iteration. `gated`: the
// gate may have paused the drafts before any was accepted.
void expect_same(const Outputs& plain, const Outputs& spec, bool alone = false, bool gated = false) {
  ASSERT_EQ(plain.tokens.size(), spec.tokens.size());
  for (size_t i = 0; i < plain.tokens.size(); ++i) {
    EXPECT_EQ(plain.tokens[i], spec.tokens[i]) << "request " << i;
    ASSERT_EQ(plain.logprobs[i].size(), spec.logprobs[i].size());
    for (size_t j = 0; j < plain.logprobs[i].size(); ++j)
      EXPECT_NEAR(plain.logprobs[i][j], spec.logprobs[i][j], 1e-4) << "request " << i << " token " << j;
  }
  EXPECT_GT(spec.counters.spec_verify_chunks, 0);
  if (!gated) {
    EXPECT_GT(spec.counters.spec_accepted_tokens, 0);
  }
  EXPECT_EQ(plain.counters.spec_draft_tokens, 0);
  if (alone) {
    EXPECT_EQ(spec.counters.iterations, plain.counters.iterations - spec.counters.spec_accepted_tokens);
  }
}

struct Setting {
  const char* name;
  float temperature;
  std::optional<uint64_t> seed;
};

class SameTokensWithDrafts : public ::testing::TestWithParam<Setting> {};

TEST_P(SameTokensWithDrafts, Stories260KAlone) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto model = ModelFile::open(path);
  CpuBackendOptions o;
  o.kv.device_blocks = 64;
  o.threads = 2;
  auto be = on_dot_path(make_cpu_backend(*model, o));
  SamplingParams p;
  p.temperature = GetParam().temperature;
  p.seed = GetParam().seed;
  p.max_tokens = 48;
  const std::vector<std::vector<int32_t>> prompts{repetitive_prompt(512, 5, 9, 4)};
  NgramDraftProposer drafter(4);
  expect_same(serve(*be, prompts, p, nullptr), serve(*be, prompts, p, &drafter), /*alone=*/true);
}

TEST_P(SameTokensWithDrafts, TestModelBatched) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 96;
  o.threads = 1;
  auto be = on_dot_path(make_cpu_backend(m.config(), m.weights(), o));
  SamplingParams p;
  p.temperature = GetParam().temperature;
  p.seed = GetParam().seed;
  p.max_tokens = 40;
  const std::vector<std::vector<int32_t>> prompts{repetitive_prompt(67, 1, 5, 3), repetitive_prompt(67, 2, 7, 2),
                                                  repetitive_prompt(67, 3, 3, 6)};
  NgramDraftProposer drafter(3);
  expect_same(serve(*be, prompts, p, nullptr), serve(*be, prompts, p, &drafter));
}

// The gate decides from step times which steps carry drafts; the tokens stay the same
// whatever it decides. The step times are modelled (ModelledStepTime), so its decisions
// are the same on every run: with a step cost dominated by the per-token term a draft
// never pays and the gate pauses drafting; with a large fixed cost drafts pay.
TEST_P(SameTokensWithDrafts, WithTheGate) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto model = ModelFile::open(path);
  CpuBackendOptions o;
  o.kv.device_blocks = 64;
  o.threads = 1;
  auto be = on_dot_path(make_cpu_backend(*model, o));
  SamplingParams p;
  p.temperature = GetParam().temperature;
  p.seed = GetParam().seed;
  p.max_tokens = 96;
  const std::vector<std::vector<int32_t>> prompts{repetitive_prompt(512, 5, 9, 4)};
  NgramDraftProposer drafter(4);
  const Outputs plain = serve(*be, prompts, p, nullptr);
  const Outputs not_paying = serve(*be, prompts, p, &drafter, 64, "sarathi", StepTimeModel{0.0, 1e-3});
  expect_same(plain, not_paying, /*alone=*/false, /*gated=*/true);
  EXPECT_GT(not_paying.counters.spec_pauses, 0);
  const Outputs paying = serve(*be, prompts, p, &drafter, 64, "sarathi", StepTimeModel{20e-3, 1e-5});
  expect_same(plain, paying, /*alone=*/false, /*gated=*/true);
  EXPECT_LT(paying.counters.spec_pauses, not_paying.counters.spec_pauses);
}

INSTANTIATE_TEST_SUITE_P(Sampling, SameTokensWithDrafts,
                         ::testing::Values(Setting{"greedy", 0.0f, std::nullopt}, Setting{"seeded", 0.9f, 1234}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(SpeculativeDecoding, DraftTokensCountAgainstTheTokenBudget) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 96;
  o.threads = 1;
  auto be = on_dot_path(make_cpu_backend(m.config(), m.weights(), o));
  SamplingParams p = SamplingParams::greedy();
  p.max_tokens = 24;
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 6; ++i) prompts.push_back(repetitive_prompt(67, 10 + i, 4, 3));
  NgramDraftProposer drafter(6);
  const Outputs spec = serve(*be, prompts, p, &drafter, /*token_budget=*/16);
  EXPECT_LE(spec.max_plan_tokens, 16);
  EXPECT_GT(spec.counters.spec_draft_tokens, 0);
  expect_same(serve(*be, prompts, p, nullptr, 16), spec);
}

class SameTokensUnderPreemption : public ::testing::TestWithParam<const char*> {};

TEST_P(SameTokensUnderPreemption, WhenKvRunsOut) {
  TestModel m(TestModelSpec{});
  CpuBackendOptions o;
  o.kv.device_blocks = 10;  // 160 tokens for four requests of up to 61: preemptions
  o.threads = 1;
  auto be = on_dot_path(make_cpu_backend(m.config(), m.weights(), o));
  SamplingParams p = SamplingParams::greedy();
  p.max_tokens = 40;
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 4; ++i) prompts.push_back(repetitive_prompt(67, 20 + i, 7, 3));
  NgramDraftProposer drafter(4);
  const Outputs spec = serve(*be, prompts, p, &drafter, 64, GetParam());
  // ecoserve admits by reservation and pauses (holds) rather than preempting here.
  if (std::string(GetParam()) != "ecoserve") {
    EXPECT_GT(spec.counters.preemptions, 0);
  }
  expect_same(serve(*be, prompts, p, nullptr, 64, GetParam()), spec);
}

INSTANTIATE_TEST_SUITE_P(Policies, SameTokensUnderPreemption, ::testing::Values("sarathi", "vllm", "seer", "ecoserve"));

}  // namespace
}  // namespace seer
