// ExecutorFeed: the engine's side of the self-contained plan (docs/architecture.md
// §2). A request is sent whole once, then only what changed: block-table diffs from
// the longest common prefix, tokens the executor did not sample, the ids that left;
// and an ExecutorState fed those plans holds exactly the scheduler's tokens and tables.
#include <stdexcept>

#include <gtest/gtest.h>

#include "common/clock.h"
#include "common/error.h"
#include "engine/engine.h"
#include "engine/executor_feed.h"
#include "engine/executor_state.h"
#include "engine/engine_harness.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer {
namespace {

class ExecutorFeedTest : public ::testing::Test {
 protected:
  ExecutorFeedTest() : kv_(KvConfig{4, 16, 0, 0}), state_(4) {}

  RequestId add(std::vector<int32_t> prompt) {
    Request r;
    r.id = next_++;
    r.prompt_tokens = std::move(prompt);
    r.sampling.temperature = 0.5f;
    r.sampling.max_tokens = 9;
    return table_.add(std::move(r)).id;
  }
  // A plan with one chunk per (request, start, tokens), sampling at the sequence's end;
  // filled by the feed and applied to the executor's state.
  StepPlan plan(const std::vector<std::tuple<RequestId, int32_t, int32_t>>& chunks) {
    StepPlan p;
    for (auto [id, start, n] : chunks) {
      EXPECT_TRUE(kv_.allocate(id, start + n));
      p.chunks.push_back({id, start, n, start + n == table_.get(id).num_tokens()});
    }
    feed_.fill(p, table_, kv_);
    state_.apply(p);
    return p;
  }
  // The executor sampled `token` for `id` and the engine appended it too.
  void sampled(RequestId id, int32_t token) {
    state_.append_sampled(id, token);
    table_.get(id).output_tokens.push_back(token);
  }
  void expect_mirrors(RequestId id) {
    const Request& r = table_.get(id);
    const ExecutorRequest& e = state_.get(id);
    EXPECT_EQ(e.prompt, r.prompt_tokens);
    EXPECT_EQ(e.output, r.output_tokens);
    EXPECT_EQ(e.block_table, kv_.table(id).device);
  }

  KvManager kv_;
  RequestTable table_;
  ExecutorFeed feed_;
  ExecutorState state_;
  RequestId next_ = 0;
};

TEST_F(ExecutorFeedTest, SendsARequestWholeOnceThenOnlyWhatChanged) {
  RequestId a = add({5, 6, 7, 8, 9, 10});
  StepPlan p1 = plan({{a, 0, 6}});
  ASSERT_EQ(p1.new_requests.size(), 1u);
  EXPECT_EQ(p1.new_requests[0].prompt_tokens, table_.get(a).prompt_tokens);
  EXPECT_EQ(p1.new_requests[0].sampling.temperature, 0.5f);
  ASSERT_EQ(p1.block_tables.size(), 1u);
  EXPECT_EQ(p1.block_tables[0].keep, 0);
  EXPECT_EQ(p1.block_tables[0].blocks, kv_.table(a).device);
  sampled(a, 11);

  StepPlan p2 = plan({{a, 6, 1}});  // 7 tokens: still two blocks
  EXPECT_TRUE(p2.new_requests.empty());
  EXPECT_TRUE(p2.block_tables.empty());
  EXPECT_TRUE(p2.appended_tokens.empty());
  sampled(a, 12);

  StepPlan p3 = plan({{a, 7, 1}});
  EXPECT_TRUE(p3.block_tables.empty());
  sampled(a, 13);
  StepPlan p4 = plan({{a, 8, 1}});  // position 8 opens a third block: appended
  ASSERT_EQ(p4.block_tables.size(), 1u);
  EXPECT_EQ(p4.block_tables[0].keep, 2);
  EXPECT_EQ(p4.block_tables[0].blocks.size(), 1u);
  expect_mirrors(a);
}

TEST_F(ExecutorFeedTest, TokensTheExecutorDidNotSampleAreAppended) {
  RequestId a = add({5, 6, 7});
  plan({{a, 0, 3}});
  sampled(a, 8);
  table_.get(a).output_tokens.push_back(9);  // e.g. a token forced by the front end
  StepPlan p = plan({{a, 4, 1}});
  ASSERT_EQ(p.appended_tokens.size(), 1u);
  EXPECT_EQ(p.appended_tokens[0].tokens, std::vector<int32_t>{9});
  expect_mirrors(a);
}

TEST_F(ExecutorFeedTest, ARebuiltTableIsSentFromTheCommonPrefix) {
  RequestId a = add({1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  RequestId other = add({1, 2, 3, 4, 5, 6, 7, 8});
  plan({{a, 0, 10}});
  sampled(a, 11);
  // The last two blocks go to another request; `a` gets two others back.
  kv_.truncate(a, 4);
  ASSERT_TRUE(kv_.allocate(other, 8));
  StepPlan p = plan({{a, 4, 7}});
  ASSERT_EQ(p.block_tables.size(), 1u);
  EXPECT_EQ(p.block_tables[0].keep, 1);
  expect_mirrors(a);
}

TEST_F(ExecutorFeedTest, APreemptedRequestsTableIsSentWholeOnResume) {
  RequestId a = add({1, 2, 3, 4, 5});
  plan({{a, 0, 5}});
  sampled(a, 6);
  kv_.free(a);
  StepPlan preempting;
  preempting.preemptions.push_back({a, PreemptionMode::Recompute, 5});
  feed_.fill(preempting, table_, kv_);
  state_.apply(preempting);
  EXPECT_TRUE(state_.get(a).block_table.empty());
  StepPlan p = plan({{a, 0, 6}});
  ASSERT_EQ(p.block_tables.size(), 1u);
  EXPECT_EQ(p.block_tables[0].keep, 0);
  expect_mirrors(a);
}

TEST_F(ExecutorFeedTest, ForgottenRequestsAreListedOnceInTheNextPlan) {
  RequestId a = add({1, 2, 3});
  RequestId never_sent = add({4, 5});
  plan({{a, 0, 3}});
  feed_.forget(a);
  feed_.forget(never_sent);
  EXPECT_EQ(feed_.size(), 0u);
  StepPlan p;
  feed_.fill(p, table_, kv_);
  EXPECT_EQ(p.finished, std::vector<RequestId>{a});
  state_.apply(p);
  EXPECT_FALSE(state_.contains(a));
  StepPlan q;
  feed_.fill(q, table_, kv_);
  EXPECT_TRUE(q.finished.empty());
}

TEST_F(ExecutorFeedTest, AChunkOfARequestThatIsNotLiveIsALogicError) {
  StepPlan p;
  p.chunks.push_back({42, 0, 1, true});
  EXPECT_THROW(feed_.fill(p, table_, kv_), std::logic_error);
}

TEST(ExecutorState, AppliesUpdatesInOrderAndChecksEveryChunk) {
  ExecutorState s(4);
  StepPlan p;
  p.new_requests = {{3, {1, 2, 3}, {4}, {}}};
  p.appended_tokens = {{3, {5, 6}}};
  p.block_tables = {{3, 0, {7, 2}}};
  p.chunks = {{3, 4, 2, true}, {3, 0, 4, false}};
  s.apply(p);
  EXPECT_EQ(s.get(3).num_tokens(), 6);
  EXPECT_EQ(s.get(3).token_at(5), 6);

  StepPlan held;  // Held keeps its device blocks
  held.preemptions.push_back({3, PreemptionMode::Held});
  held.chunks = {{3, 5, 1, true}};
  EXPECT_NO_THROW(s.apply(held));
  StepPlan swapped;
  swapped.preemptions.push_back({3, PreemptionMode::Swap});
  swapped.chunks = {{3, 5, 1, true}};
  EXPECT_THROW(s.apply(swapped), Error);  // its table went with the swap, none was sent
  StepPlan appended_to_unknown;
  appended_to_unknown.appended_tokens = {{8, {1}}};
  EXPECT_THROW(s.apply(appended_to_unknown), Error);
  StepPlan unknown_finished;  // e.g. sent in a plan that failed before it arrived
  unknown_finished.finished = {8};
  EXPECT_NO_THROW(s.apply(unknown_finished));
  EXPECT_THROW(ExecutorState(0), Error);
}

// Counts what the plans carried; a token per sampled chunk.
class CountingExecutor final : public Executor {
 public:
  explicit CountingExecutor(bool needs) : needs_(needs) {}
  StepResult execute(const StepPlan& plan) override {
    payloads += plan.new_requests.size() + plan.block_tables.size() + plan.finished.size();
    StepResult r;
    for (const ScheduledChunk& c : plan.chunks)
      if (c.sample) r.sampled.push_back({c.request, 1, 0.0f});
    r.elapsed_s = 0.01;
    return r;
  }
  bool simulated() const override { return true; }
  bool needs_request_data() const override { return needs_; }
  size_t payloads = 0;

 private:
  bool needs_;
};

TEST(ExecutorFeedInEngine, OnlyAnExecutorThatNeedsRequestDataGetsIt) {
  for (bool needs : {true, false}) {
    KvManager kv(KvConfig{4, 32, 0, 0});
    auto scheduler = make_scheduler(SchedulerConfig{});
    CountingExecutor executor(needs);
    VirtualClock clock;
    Engine engine(*scheduler, executor, kv, clock);
    for (int i = 0; i < 3; ++i) {
      Request r;
      r.prompt_tokens = {5, 6, 7};
      r.sampling.max_tokens = 4;
      engine.add_request(std::move(r));
    }
    while (engine.has_unfinished()) engine.step();
    if (needs)
      EXPECT_GE(executor.payloads, 6u);  // three new requests, their tables, and later their ids
    else
      EXPECT_EQ(executor.payloads, 0u);
  }
}

// Engine::recover ends every live request without the usual finish: the executor
// must still hear of each (the next plan's `finished`), or its copies would stay.
TEST(ExecutorFeedInEngine, ARecoveryTellsTheExecutorToDropEveryRequestItEnded) {
  SchedulerConfig sc;
  sc.max_batch_size = 4;
  testing::EngineHarness h(sc, KvConfig{4, 40, 0, 32});
  for (int i = 0; i < 6; ++i) h.add("a" + std::to_string(i), testing::make_prompt(9, i), 12, 8);
  for (int i = 0; i < 3; ++i) h.engine->step();
  std::vector<RequestId> ended;
  for (const auto& [id, r] : h.engine->requests())
    if (h.executor.state().contains(id)) ended.push_back(id);
  ASSERT_FALSE(ended.empty());
  h.kv.free(ended.front());  // corrupt the state: a step fails
  EXPECT_THROW(h.engine->step(), std::exception);
  h.engine->recover("test");
  h.add("b", testing::make_prompt(9, 99), 4, 4);
  h.engine->step();
  for (RequestId id : ended) EXPECT_FALSE(h.executor.state().contains(id)) << id;
  EXPECT_EQ(h.executor.state().size(), 1u);  // only b
  ASSERT_TRUE(h.run());
}

}  // namespace
}  // namespace seer
