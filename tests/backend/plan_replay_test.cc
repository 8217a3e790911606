// An executor given only plans (docs/architecture.md §2): the plans an Engine
// produced on random traces with preemption by recompute and by swap, chunked
// prefills, Pensieve's dropped-and-recomputed leading tokens and prefix reuse are
// replayed into a fresh ModelExecutor on a fresh backend, with no scheduler, request
// table or KV manager in reach; it samples the same tokens with the same logprobs,
// and after each plan its own copy of every computed request (tokens, block table)
// equals the scheduler's.
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/cpu_backend.h"
#include "common/clock.h"
#include "common/error.h"
#include "engine/engine.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"
#include "test_model.h"

namespace seer {
namespace {

using testing::TestModel;
using testing::TestModelSpec;

constexpr int32_t kBlock = 4;
constexpr int32_t kVocab = 200;

// Passes plans through to a ModelExecutor and keeps each plan and its result.
class RecordingExecutor final : public Executor {
 public:
  explicit RecordingExecutor(ModelExecutor& inner) : inner_(inner) {}
  StepResult execute(const StepPlan& plan) override {
    plans.push_back(plan);
    results.push_back(inner_.execute(plan));
    return results.back();
  }
  bool simulated() const override { return false; }

  std::vector<StepPlan> plans;
  std::vector<StepResult> results;

 private:
  ModelExecutor& inner_;
};

// What the scheduler's side holds of a request when a plan goes out.
struct Truth {
  std::vector<int32_t> tokens;
  std::vector<int32_t> block_table;
};

class Observer final : public EngineObserver {
 public:
  void on_plan(const StepPlan& plan) override {
    std::map<RequestId, Truth>& t = truths.emplace_back();
    for (const ScheduledChunk& c : plan.chunks) {
      const Request& r = engine->requests().get(c.request);
      Truth& x = t[c.request];
      x.tokens = r.prompt_tokens;
      x.tokens.insert(x.tokens.end(), r.output_tokens.begin(), r.output_tokens.end());
      x.block_table = engine->kv().table(c.request).device;
    }
  }
  void on_finished(const Request& r) override { finished.push_back(r.external_id); }

  Engine* engine = nullptr;
  std::vector<std::map<RequestId, Truth>> truths;  // one per plan
  std::vector<std::string> finished;
};

struct Spec {
  std::string id;
  std::string conversation;  // turns after the first continue it
  std::vector<int32_t> prompt;
  int32_t max_tokens = 0;
  int arrival_step = 0;
  int after = -1;  // submitted once this spec's request finished
};

struct Scenario {
  std::string policy;
  PreemptionMode preemption = PreemptionMode::Recompute;
  int32_t device_blocks = 0, host_blocks = 0;
  int32_t token_budget = 0;
  std::optional<ConversationCacheConfig> cache;
  std::vector<Spec> trace;
};

struct Recorded {
  std::vector<StepPlan> plans;
  std::vector<StepResult> results;
  std::vector<std::map<RequestId, Truth>> truths;
  EngineCounters counters;
  CacheCounters cache_counters;
};

std::unique_ptr<Backend> make_backend(const TestModel& m, const Scenario& s) {
  CpuBackendOptions o;
  o.kv.block_size = kBlock;
  o.kv.device_blocks = s.device_blocks;
  o.kv.host_blocks = s.host_blocks;
  o.threads = 1;
  return make_cpu_backend(m.config(), m.weights(), o);
}

SamplingParams sampling(size_t i, int32_t max_tokens) {
  SamplingParams p;
  p.temperature = 0.8f;
  p.top_p = 0.95f;
  if (i % 2) p.seed = 100 + i;  // the others draw a seed from the executor, in order
  p.logprobs = true;
  p.ignore_eos = true;
  p.max_tokens = max_tokens;
  return p;
}

Recorded record(const TestModel& model, const Scenario& s) {
  auto backend = make_backend(model, s);
  KvManager kv(KvConfig{kBlock, s.device_blocks, s.host_blocks,
                        static_cast<int64_t>(backend->kv_bytes_per_token()) * kBlock});
  SchedulerConfig sc;
  sc.policy = s.policy;
  sc.preemption = s.preemption;
  sc.max_batch_size = 6;
  sc.token_budget = s.token_budget;
  auto scheduler = make_scheduler(sc);
  EngineConfig ec;
  ec.max_model_len = 256;
  ec.check_invariants = true;
  if (s.cache) scheduler->conversations().attach(std::make_unique<ConversationCache>(kv, *s.cache));
  const ConversationCache* cache = scheduler->conversations().cache();
  ModelExecutor model_executor(*backend, 7);
  RecordingExecutor executor(model_executor);
  VirtualClock clock;
  Engine engine(*scheduler, executor, kv, clock, ec);
  Observer observer;
  observer.engine = &engine;
  engine.add_observer(&observer);

  std::vector<bool> submitted(s.trace.size(), false);
  auto done = [&](int i) {
    return std::find(observer.finished.begin(), observer.finished.end(), s.trace[i].id) != observer.finished.end();
  };
  for (int step = 0; step < 20000; ++step) {
    for (size_t i = 0; i < s.trace.size(); ++i) {
      const Spec& x = s.trace[i];
      if (submitted[i] || x.arrival_step > step || (x.after >= 0 && !done(x.after))) continue;
      Request r;
      r.external_id = x.id;
      r.prompt_tokens = x.prompt;
      r.sampling = sampling(i, x.max_tokens);
      r.conversation = x.conversation;
      r.continues_conversation = !x.conversation.empty();
      engine.add_request(std::move(r));
      submitted[i] = true;
    }
    if (observer.finished.size() == s.trace.size()) break;
    engine.step();
    clock.advance(0.01);
  }
  EXPECT_EQ(observer.finished.size(), s.trace.size());
  Recorded out{std::move(executor.plans), std::move(executor.results), std::move(observer.truths),
               engine.counters(), cache ? cache->counters() : CacheCounters{}};
  return out;
}

struct ReplayCounts {
  int resumed_tables = 0;  // whole tables sent again for a request the executor knew
  int two_range_requests = 0;
};

// Replays the plans into a fresh executor that sees nothing else.
ReplayCounts replay(const TestModel& model, const Scenario& s, const Recorded& rec) {
  auto backend = make_backend(model, s);
  ModelExecutor fresh(*backend, 7);
  ReplayCounts counts;
  EXPECT_EQ(rec.plans.size(), rec.truths.size());
  for (size_t i = 0; i < rec.plans.size(); ++i) {
    const StepPlan& plan = rec.plans[i];
    for (const BlockTableUpdate& u : plan.block_tables)
      if (fresh.state().contains(u.request) && u.keep == 0) ++counts.resumed_tables;
    std::map<RequestId, int> ranges;
    for (const ScheduledChunk& c : plan.chunks)
      if (++ranges[c.request] == 2) ++counts.two_range_requests;

    const StepResult got = fresh.execute(plan);
    const StepResult& want = rec.results[i];
    EXPECT_EQ(got.sampled.size(), want.sampled.size()) << "plan " << i;
    for (size_t k = 0; k < std::min(got.sampled.size(), want.sampled.size()); ++k) {
      EXPECT_EQ(got.sampled[k].request, want.sampled[k].request) << "plan " << i;
      EXPECT_EQ(got.sampled[k].token, want.sampled[k].token) << "plan " << i << " request " << want.sampled[k].request;
      EXPECT_EQ(got.sampled[k].logprob, want.sampled[k].logprob) << "plan " << i;
    }
    for (const auto& [id, truth] : rec.truths[i]) {
      const ExecutorRequest& r = fresh.state().get(id);
      EXPECT_EQ(r.block_table, truth.block_table) << "plan " << i << " request " << id;
      std::vector<int32_t> tokens = r.prompt;
      tokens.insert(tokens.end(), r.output.begin(), r.output.end());
      // The executor has appended the token it just sampled.
      const bool sampled = std::any_of(got.sampled.begin(), got.sampled.end(), [id = id](auto& x) { return x.request == id; });
      if (sampled && !tokens.empty()) tokens.pop_back();
      EXPECT_EQ(tokens, truth.tokens) << "plan " << i << " request " << id;
    }
    if (::testing::Test::HasFailure()) break;
  }
  return counts;
}

std::vector<int32_t> random_tokens(std::mt19937& rng, int n) {
  std::vector<int32_t> t;
  for (int i = 0; i < n; ++i) t.push_back(1 + static_cast<int32_t>(rng() % (kVocab - 1)));
  return t;
}

std::vector<Spec> independent_trace(uint32_t seed, int n) {
  std::mt19937 rng(seed);
  std::vector<Spec> v;
  int step = 0;
  for (int i = 0; i < n; ++i) {
    step += static_cast<int>(rng() % 3);
    v.push_back({"r" + std::to_string(i), "", random_tokens(rng, 8 + static_cast<int>(rng() % 33)),
                 8 + static_cast<int32_t>(rng() % 23), step, -1});
  }
  return v;
}

class PlanReplay : public ::testing::Test {
 protected:
  PlanReplay() : model_([] {
      TestModelSpec spec;
      spec.vocab = kVocab;
      return spec;
    }()) {}
  TestModel model_;
};

TEST_F(PlanReplay, PreemptionByRecomputeWithChunkedPrefill) {
  Scenario s{"sarathi", PreemptionMode::Recompute, 24, 0, 16, std::nullopt, independent_trace(1, 16)};
  Recorded rec = record(model_, s);
  EXPECT_GT(rec.counters.preemptions_recompute, 0);
  ReplayCounts c = replay(model_, s, rec);
  EXPECT_GT(c.resumed_tables, 0);
}

TEST_F(PlanReplay, PreemptionBySwap) {
  Scenario s{"vllm", PreemptionMode::Swap, 24, 48, 0, std::nullopt, independent_trace(2, 16)};
  Recorded rec = record(model_, s);
  EXPECT_GT(rec.counters.preemptions_swap, 0);
  ReplayCounts c = replay(model_, s, rec);
  EXPECT_GT(c.resumed_tables, 0);
}

// Four conversations of three turns on a device pool that cannot keep their
// histories and a host tier of two blocks: Pensieve drops leading chunks, and a
// later turn recomputes them as a second range of its sequence.
TEST_F(PlanReplay, PensieveDroppedLeadingTokens) {
  std::mt19937 rng(3);
  std::vector<Spec> trace;
  for (int turn = 0; turn < 3; ++turn)
    for (int c = 0; c < 4; ++c) {
      const int after = turn == 0 ? -1 : static_cast<int>(trace.size()) - 4;
      trace.push_back({"c" + std::to_string(c) + "t" + std::to_string(turn), "conv" + std::to_string(c),
                       random_tokens(rng, 12 + static_cast<int>(rng() % 9)), 10, c, after});
    }
  ConversationCacheConfig cc;
  cc.keep_kv = true;
  cc.host_tier = policy_info("pensieve").cache_host_tier;
  cc.chunk_tokens = kBlock;
  Scenario s{"pensieve", PreemptionMode::Recompute, 40, 2, 0, cc, trace};
  Recorded rec = record(model_, s);
  EXPECT_GT(rec.cache_counters.dropped_tokens, 0);
  EXPECT_GT(rec.cache_counters.hit_tokens_device + rec.cache_counters.hit_tokens_host, 0);
  ReplayCounts c = replay(model_, s, rec);
  EXPECT_GT(c.two_range_requests, 0);
}

// Stateless clients sending an earlier prompt again: the cache's blocks become the
// new request's leading blocks.
TEST_F(PlanReplay, PrefixReuse) {
  std::vector<Spec> trace = independent_trace(4, 12);
  for (size_t i = 1; i < trace.size(); i += 2) {
    trace[i].prompt = trace[i - 1].prompt;
    trace[i].after = static_cast<int>(i) - 1;
  }
  ConversationCacheConfig cc;
  cc.prefix_reuse = true;
  Scenario s{"vllm", PreemptionMode::Recompute, 48, 0, 0, cc, trace};
  Recorded rec = record(model_, s);
  EXPECT_GT(rec.cache_counters.hit_tokens_device, 0);
  replay(model_, s, rec);
}

// A plan that does not match what the executor holds is refused with a message
// naming the request, before anything runs.
TEST_F(PlanReplay, InconsistentPlansGiveClearErrors) {
  Scenario s{"vllm", PreemptionMode::Recompute, 16, 0, 0, std::nullopt, {}};
  auto backend = make_backend(model_, s);
  ModelExecutor ex(*backend, 7);
  auto message = [&](const StepPlan& p) {
    try {
      ex.execute(p);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  StepPlan unknown;
  unknown.chunks = {{5, 0, 3, true}};
  EXPECT_EQ(message(unknown), "plan: chunk of unknown request 5 (never sent, or finished)");

  StepPlan first;
  first.new_requests = {{0, {3, 4, 5, 6, 7, 8}, {}, SamplingParams::greedy()}};
  first.block_tables = {{0, 0, {2}}};  // one block of 4 for a chunk of 6 tokens
  first.chunks = {{0, 0, 6, true}};
  EXPECT_EQ(message(first), "plan: chunk [0, 6) of request 0 needs 2 blocks, its block table has 1");

  StepPlan fixed;
  fixed.block_tables = {{0, 1, {-1}}};
  fixed.chunks = {{0, 0, 6, true}};
  EXPECT_EQ(message(fixed), "plan: chunk [0, 6) of request 0 reads logical block 1, which has no device block");
  fixed.block_tables = {{0, 1, {3}}};
  EXPECT_EQ(ex.execute(fixed).sampled.size(), 1u);

  StepPlan beyond;
  beyond.chunks = {{0, 6, 2, true}};  // the sequence is 7 tokens long
  EXPECT_EQ(message(beyond), "plan: chunk [6, 8) of request 0 is outside its 7 tokens");
  StepPlan bad_keep;
  bad_keep.block_tables = {{0, 5, {}}};
  EXPECT_EQ(message(bad_keep), "plan: block-table update of request 0 keeps 5 blocks of its 2");
  StepPlan twice;
  twice.new_requests = {{0, {3}, {}, {}}};
  EXPECT_EQ(message(twice), "plan: new request 0 is already known");

  StepPlan gone;
  gone.finished = {0};
  EXPECT_EQ(ex.execute(gone).sampled.size(), 0u);
  StepPlan after;
  after.chunks = {{0, 6, 1, true}};
  EXPECT_EQ(message(after), "plan: chunk of unknown request 0 (never sent, or finished)");
}

}  // namespace
}  // namespace seer
