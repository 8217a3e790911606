// Speculative decoding with a draft model (runtime/model_draft_proposer.h,
// docs/speculative.md): the real engine, scheduler and ModelExecutor give the same
// greedy tokens with and without the draft model; a model drafting for itself is
// accepted almost always (so the drafts are really verified and used); the drafter
// feeds only what its cache lacks, frees a request's K/V when the engine is done
// with it, and refuses a model with another vocabulary.
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <random>

#include "backend/cpu_backend.h"
#include "common/clock.h"
#include "common/error.h"
#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "runtime/model_draft_proposer.h"
#include "runtime/model_executor.h"
#include "model/gguf_file.h"
#include "scheduler/scheduler.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

// A random llama GGUF with the synthetic byte-level vocabulary of `vocab` tokens.
std::string random_gguf(const std::string& name, int dim, int layers, int vocab, uint64_t seed) {
  const std::string path = testing::scratch_dir() + "/draft-model-" + name + ".gguf";
  RandomModelOptions o;
  o.shape = ModelShape{.name = name, .n_layers = layers, .dim = dim, .n_heads = 4, .n_kv_heads = 2,
                       .ffn_dim = 2 * dim, .vocab_size = vocab, .context_length = 512};
  o.seed = seed;
  o.threads = 1;
  o.progress = false;
  (void)write_random_model(path, o);
  return path;
}

struct ServedRun {
  std::map<std::string, std::vector<int32_t>> tokens;
  EngineCounters counters;
};

class Recorder : public EngineObserver {
 public:
  void on_finished(const Request& r) override { tokens[r.external_id] = r.output_tokens; }
  std::map<std::string, std::vector<int32_t>> tokens;
};

// Serves `prompts` as one batch, greedy, on a fresh engine over `be`; the gate off
// (these tests check verification, which needs every draft verified).
ServedRun serve(Backend& be, const std::vector<std::vector<int32_t>>& prompts, DraftProposer* drafter, int max_tokens = 40) {
  KvManager kv(KvConfig{be.block_size(), be.device_blocks(), 0,
                        static_cast<int64_t>(be.kv_bytes_per_token()) * be.block_size()});
  SchedulerConfig sc;
  sc.policy = "sarathi";
  sc.token_budget = 64;
  auto scheduler = make_scheduler(sc);
  ModelExecutor executor(be, 7);
  VirtualClock clock;
  EngineConfig ec;
  ec.check_invariants = true;
  ec.drafter = drafter;
  ec.speculation_gate.enabled = false;
  ec.max_model_len = 512;
  Engine engine(*scheduler, executor, kv, clock, ec);
  Recorder rec;
  engine.set_observer(&rec);
  for (size_t i = 0; i < prompts.size(); ++i) {
    Request r;
    r.external_id = std::to_string(i);
    r.prompt_tokens = prompts[i];
    r.sampling.temperature = 0;
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    engine.add_request(std::move(r));
  }
  while (engine.has_unfinished()) engine.step();
  EXPECT_EQ(kv.usage().device.used(), 0);
  return ServedRun{rec.tokens, engine.counters()};
}

std::vector<int32_t> random_prompt(int vocab, uint32_t seed, int len) {
  std::mt19937 rng(seed);
  std::vector<int32_t> t(static_cast<size_t>(len));
  for (auto& x : t) x = static_cast<int32_t>(1 + rng() % static_cast<uint32_t>(vocab - 1));
  return t;
}

std::unique_ptr<Backend> backend_for(const ModelFile& m, int blocks = 96) {
  CpuBackendOptions o;
  o.kv.device_blocks = blocks;
  o.threads = 1;
  return make_cpu_backend(m, o);
}

TEST(DraftModel, DraftingForItselfIsAcceptedAlmostAlwaysAndKeepsTheGreedyText) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto target = ModelFile::open(path);
  auto be = backend_for(*target);
  auto drafter = ModelDraftProposer::open(path, *target, ModelDraftOptions{.max_tokens = 4, .slots = 4, .threads = 1});
  const std::vector<std::vector<int32_t>> prompts{tokenizer_from_gguf(*target->gguf())->encode("Once upon a time", true)};
  const ServedRun plain = serve(*be, prompts, nullptr, 64);
  const ServedRun spec = serve(*be, prompts, drafter.get(), 64);
  EXPECT_EQ(spec.tokens, plain.tokens);
  ASSERT_GT(spec.counters.spec_draft_tokens, 0);
  // The same model greedy: every draft is the token the target samples, but for
  // near ties that a different batch shape may flip.
  EXPECT_GE(static_cast<double>(spec.counters.spec_accepted_tokens) / spec.counters.spec_draft_tokens, 0.95);
  // Alone, every accepted draft saves an iteration: drafts that were ignored would not.
  EXPECT_EQ(spec.counters.iterations, plain.counters.iterations - spec.counters.spec_accepted_tokens);
  EXPECT_LT(spec.counters.iterations * 3, plain.counters.iterations);
  EXPECT_EQ(drafter->live_requests(), 0);
}

TEST(DraftModel, ARandomPairKeepsTheGreedyTextInABatch) {
  const std::string target_path = random_gguf("target", 64, 2, 300, 3);
  const std::string draft_path = random_gguf("draft", 32, 1, 300, 4);
  auto target = ModelFile::open(target_path);
  auto be = backend_for(*target);
  auto drafter =
      ModelDraftProposer::open(draft_path, *target, ModelDraftOptions{.max_tokens = 3, .slots = 2, .threads = 1});
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 4; ++i) prompts.push_back(random_prompt(300, 10 + i, 7 + 5 * static_cast<int>(i)));
  const ServedRun plain = serve(*be, prompts, nullptr);
  const ServedRun spec = serve(*be, prompts, drafter.get());  // 4 requests, 2 slots: they take slots from each other
  EXPECT_EQ(spec.tokens, plain.tokens);
  EXPECT_GT(spec.counters.spec_verify_chunks, 0);
  EXPECT_GT(spec.counters.spec_draft_tokens, 0);
  EXPECT_EQ(drafter->live_requests(), 0);
}

TEST(DraftModel, FeedsOnlyWhatItsCacheLacksAndDraftsAsIfFromScratch) {
  const std::string path = random_gguf("cache", 32, 1, 300, 5);
  auto model = ModelFile::open(path);
  ModelDraftProposer cached(*model, ModelDraftOptions{.max_tokens = 4, .slots = 1, .threads = 1});
  const std::vector<int32_t> prompt = random_prompt(300, 1, 9);
  const std::vector<int32_t> d1 = cached.propose(7, prompt, {}, 4);
  ASSERT_EQ(d1.size(), 4u);
  EXPECT_EQ(cached.fed_tokens(), 9 + 3);  // the prompt, then each draft but the last
  // The first draft accepted, the second rejected: the target sampled x instead.
  const int32_t x = (d1[1] + 1) % 300;
  const std::vector<int32_t> output{d1[0], x};
  const std::vector<int32_t> d2 = cached.propose(7, prompt, output, 4);
  EXPECT_EQ(cached.fed_tokens(), 12 + 1 + 3);  // x only (d1[0] is kept), then the new drafts
  ModelDraftProposer fresh(*model, ModelDraftOptions{.max_tokens = 4, .slots = 1, .threads = 1});
  EXPECT_EQ(d2, fresh.propose(1, prompt, output, 4));
  // Everything it drafted accepted and one more: only that token is new.
  std::vector<int32_t> all = output;
  all.insert(all.end(), d2.begin(), d2.end());
  all.push_back(5);
  (void)cached.propose(7, prompt, all, 2);
  EXPECT_EQ(cached.fed_tokens(), 16 + 2 + 1);  // the last draft, then 5, then one draft
  // The limit, and the slot's end, cap the drafts.
  EXPECT_EQ(cached.propose(7, prompt, all, 1).size(), 1u);
  EXPECT_TRUE(cached.propose(7, prompt, all, 0).empty());
  ModelDraftProposer small(*model, ModelDraftOptions{.max_tokens = 4, .slots = 1, .slot_tokens = 11, .threads = 1});
  EXPECT_EQ(small.propose(1, prompt, {}, 4).size(), 3u);  // positions 9, 10 fed, 3 drafts
}

TEST(DraftModel, FreesEachRequestsStateOnFinishAndAbort) {
  const std::string target_path = random_gguf("target-free", 64, 2, 300, 6);
  const std::string draft_path = random_gguf("draft-free", 32, 1, 300, 7);
  auto target = ModelFile::open(target_path);
  auto be = backend_for(*target, 256);
  auto drafter =
      ModelDraftProposer::open(draft_path, *target, ModelDraftOptions{.max_tokens = 2, .slots = 8, .threads = 1});
  KvManager kv(KvConfig{be->block_size(), be->device_blocks(), 0,
                        static_cast<int64_t>(be->kv_bytes_per_token()) * be->block_size()});
  SchedulerConfig sc;
  sc.policy = "sarathi";
  sc.token_budget = 64;
  auto scheduler = make_scheduler(sc);
  ModelExecutor executor(*be, 7);
  VirtualClock clock;
  EngineConfig ec;
  ec.drafter = drafter.get();
  ec.speculation_gate.enabled = false;
  ec.max_model_len = 512;
  Engine engine(*scheduler, executor, kv, clock, ec);
  // 60 requests in waves of 6, every third aborted after its first step.
  for (int wave = 0; wave < 10; ++wave) {
    std::vector<RequestId> ids;
    for (int i = 0; i < 6; ++i) {
      Request r;
      r.prompt_tokens = random_prompt(300, static_cast<uint32_t>(wave * 6 + i), 5 + i);
      r.sampling.temperature = 0;
      r.sampling.max_tokens = 6;
      r.sampling.ignore_eos = true;
      ids.push_back(engine.add_request(std::move(r)));
    }
    EXPECT_EQ(drafter->live_requests(), 6);  // each took a slot at its first proposal
    engine.step();
    for (size_t i = 0; i < ids.size(); i += 3) EXPECT_TRUE(engine.abort_request(ids[i]));
    EXPECT_EQ(drafter->live_requests(), 4);
    while (engine.has_unfinished()) engine.step();
    EXPECT_EQ(drafter->live_requests(), 0) << "wave " << wave;
  }
  EXPECT_GT(engine.counters().spec_draft_tokens, 0);
}

// Counts the engine's forget() calls, passing everything to the model drafter.
class ForgetCounter final : public DraftProposer {
 public:
  explicit ForgetCounter(DraftProposer& inner) : inner_(inner) {}
  std::string name() const override { return inner_.name(); }
  std::vector<int32_t> propose(RequestId id, std::span<const int32_t> prompt, std::span<const int32_t> output,
                               int32_t limit) override {
    return inner_.propose(id, prompt, output, limit);
  }
  void forget(RequestId id) override {
    ++forgets;
    inner_.forget(id);
  }
  int32_t max_tokens() const override { return inner_.max_tokens(); }
  int forgets = 0;

 private:
  DraftProposer& inner_;
};

TEST(DraftModel, PreemptedRequestsAreForgottenAndStillGiveTheGreedyText) {
  const std::string target_path = random_gguf("target-preempt", 64, 2, 300, 11);
  const std::string draft_path = random_gguf("draft-preempt", 32, 1, 300, 12);
  auto target = ModelFile::open(target_path);
  // 8 blocks of 16 tokens for 3 requests of 12 + 40 tokens (4 blocks each): preemptions.
  auto be = backend_for(*target, 8);
  auto model_drafter =
      ModelDraftProposer::open(draft_path, *target, ModelDraftOptions{.max_tokens = 3, .slots = 4, .threads = 1});
  ForgetCounter drafter(*model_drafter);
  std::vector<std::vector<int32_t>> prompts;
  for (uint32_t i = 0; i < 3; ++i) prompts.push_back(random_prompt(300, 40 + i, 12));
  const ServedRun plain = serve(*be, prompts, nullptr);
  const ServedRun spec = serve(*be, prompts, &drafter);
  EXPECT_EQ(spec.tokens, plain.tokens);
  ASSERT_GT(spec.counters.preemptions, 0);
  EXPECT_EQ(drafter.forgets, 3 + spec.counters.preemptions);  // each finish, each preemption
  EXPECT_EQ(model_drafter->live_requests(), 0);
}

TEST(DraftModel, RefusesAModelWithAnotherVocabulary) {
  const std::string target_path = random_gguf("target-vocab", 32, 1, 300, 8);
  const std::string other_path = random_gguf("other-vocab", 32, 1, 320, 9);
  auto target = ModelFile::open(target_path);
  try {
    (void)ModelDraftProposer::open(other_path, *target, ModelDraftOptions{.threads = 1});
    FAIL() << "a draft model with 320 tokens drafted for one with 300";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("vocabulary sizes differ (target 300, draft 320)"), std::string::npos)
        << e.what();
  }
}

TEST(DraftModel, RefusesAnotherTokenizerOfTheSameSize) {
  SEER_REQUIRE_SHARED_FILE(stories, "models/stories260K.gguf");
  auto target = ModelFile::open(stories);
  // 512 tokens as stories260K has, but the synthetic byte-level vocabulary.
  const std::string same_size = random_gguf("byte-vocab-512", 32, 1, 512, 10);
  auto draft = ModelFile::open(same_size);
  const std::string why = vocabulary_mismatch(*target, *draft);
  EXPECT_FALSE(why.empty());
  EXPECT_THROW((void)ModelDraftProposer::open(same_size, *target, ModelDraftOptions{.threads = 1}), Error);
  EXPECT_EQ(vocabulary_mismatch(*target, *target), "");
}

}  // namespace
}  // namespace seer
