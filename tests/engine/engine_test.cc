#include "engine/engine.h"

#include <utility>

#include <gtest/gtest.h>

#include "common/error.h"
#include "engine/engine_harness.h"

namespace seer {
namespace {

using testing::EngineHarness;
using testing::make_prompt;

SchedulerConfig policy(const std::string& name) {
  SchedulerConfig c;
  c.policy = name;
  return c;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(Engine, ValidatesRequests) {
  EngineConfig ec;
  ec.max_model_len = 64;
  ec.vocab_size = 1000;
  EngineHarness h(policy("vllm"), KvConfig{4, 8, 0, 0}, ec);
  EXPECT_NE(error_of([&] { h.add("empty", {}, 4); }).find("request 'empty': the prompt is empty"), std::string::npos);
  // The limit is the smaller of the context (64) and what the pool holds (8 x 4 = 32).
  EXPECT_NE(error_of([&] { h.add("long", make_prompt(60, 1), 10); })
                .find("= 70 exceeds the context length of 32 tokens (all the device KV pool holds)"),
            std::string::npos);
  EngineHarness roomy(policy("vllm"), KvConfig{4, 100, 0, 0}, ec);
  const std::string ctx = error_of([&] { roomy.add("long", make_prompt(60, 1), 5); });
  EXPECT_NE(ctx.find("= 65 exceeds the context length of 64 tokens"), std::string::npos) << ctx;
  EXPECT_EQ(ctx.find("pool"), std::string::npos) << ctx;
  EXPECT_EQ(error_of([&] { roomy.add("fits", make_prompt(60, 1), 4); }), "");
  EXPECT_NE(error_of([&] { h.add("zero", make_prompt(4, 1), 0); }).find("request 'zero': max_tokens must be >= 1"), std::string::npos);
  EXPECT_NE(error_of([&] { h.add("forced", make_prompt(4, 1), 5, 6); }).find("forced output length 6"),
            std::string::npos);
  EXPECT_NE(error_of([&] { h.add("kv", make_prompt(20, 1), 13); }).find("= 33 exceeds the context length of 32"),
            std::string::npos);
  EXPECT_EQ(error_of([&] { h.add("kv-fits", make_prompt(20, 1), 12); }), "");
  EXPECT_NE(error_of([&] { h.add("vocab", {1, 5000}, 4); }).find("prompt token 5000 at index 1"), std::string::npos);
  RequestId a = h.add("ok", make_prompt(4, 1), 4);
  RequestId b = h.add("ok2", make_prompt(4, 2), 4);
  EXPECT_NE(a, b);
  EXPECT_EQ(h.engine->num_waiting(), 3u);  // kv-fits, ok, ok2
}

TEST(Engine, SimulatedExecutorNeedsVirtualClock) {
  SchedulerConfig sc = policy("vllm");
  KvConfig kc{4, 8, 0, 0};
  KvManager kv(kc);
  auto s = make_scheduler(sc);
  testing::FakeExecutor ex(kc, 10, /*simulated=*/true);
  WallClock wall;
  EXPECT_THROW(Engine(*s, ex, kv, wall), Error);
}

TEST(Engine, VirtualClockAdvancesByModelledTime) {
  EngineHarness h(policy("vllm"), KvConfig{4, 64, 0, 0}, {}, 1000, /*simulated=*/true);
  h.add("a", make_prompt(10, 1), 3, 3);
  IterationStats s1 = h.engine->step();
  EXPECT_FALSE(s1.idle);
  EXPECT_EQ(s1.num_tokens, 10);
  EXPECT_EQ(s1.batch_size, 1);
  EXPECT_NEAR(s1.elapsed_s, 0.001 + 1e-4, 1e-12);
  EXPECT_NEAR(h.virtual_clock.now(), s1.elapsed_s, 1e-12);
  EXPECT_GE(s1.scheduler_time_s, 0.0);
  ASSERT_TRUE(h.run());
  const auto& f = h.observer.finished.at("a");
  ASSERT_EQ(f.token_times.size(), 3u);
  EXPECT_NEAR(f.token_times[0], s1.elapsed_s, 1e-12);
  EXPECT_NEAR(f.token_times[2], h.virtual_clock.now(), 1e-12);
  EXPECT_EQ(f.first_scheduled, 0.0);
  EXPECT_EQ(h.engine->counters().iterations, 3);
  EXPECT_EQ(h.engine->counters().prompt_tokens, 10);
  EXPECT_EQ(h.engine->counters().generation_tokens, 3);
  IterationStats idle = h.engine->step();
  EXPECT_TRUE(idle.idle);
}

TEST(Engine, StopsAtEosUnlessIgnoredOrForced) {
  // Learn the request's third token, then make it the EOS id.
  std::vector<int32_t> free_run;
  {
    EngineHarness h(policy("vllm"), KvConfig{4, 64, 0, 0});
    h.add("a", make_prompt(6, 3), 8);
    ASSERT_TRUE(h.run());
    free_run = h.observer.finished.at("a").tokens;
    ASSERT_EQ(free_run.size(), 8u);
    EXPECT_EQ(h.observer.finished.at("a").reason, FinishReason::Length);
  }
  auto first = std::find(free_run.begin(), free_run.end(), free_run[2]) - free_run.begin();
  EngineConfig ec;
  ec.eos_ids = {free_run[2]};
  {
    EngineHarness h(policy("vllm"), KvConfig{4, 64, 0, 0}, ec);
    h.add("eos", make_prompt(6, 3), 8);
    h.add("forced", make_prompt(6, 3), 8, 7);
    Request r;
    r.external_id = "ignore";
    r.prompt_tokens = make_prompt(6, 3);
    r.sampling.max_tokens = 8;
    r.sampling.ignore_eos = true;
    h.engine->add_request(r);
    ASSERT_TRUE(h.run());
    const auto& eos = h.observer.finished.at("eos");
    EXPECT_EQ(eos.reason, FinishReason::Stop);
    EXPECT_EQ(eos.tokens.size(), static_cast<size_t>(first + 1));
    EXPECT_EQ(eos.tokens.back(), free_run[2]);
    EXPECT_EQ(h.observer.finished.at("forced").tokens.size(), 7u);
    EXPECT_EQ(h.observer.finished.at("forced").reason, FinishReason::Length);
    EXPECT_EQ(h.observer.finished.at("ignore").tokens, free_run);
    EXPECT_EQ(h.observer.duplicate_finishes, 0);
  }
}

class StopAfter : public EngineObserver {
 public:
  explicit StopAfter(int n) : n_(n) {}
  bool on_token(const Request& r, const SampledToken&) override {
    ++tokens;
    return r.num_output() >= n_;
  }
  int tokens = 0;

 private:
  int n_;
};

TEST(Engine, ObserverCanStopARequest) {
  EngineHarness h(policy("sarathi"), KvConfig{4, 64, 0, 0});
  StopAfter stop(2);
  h.engine->add_observer(&stop);
  h.add("a", make_prompt(5, 1), 10, 9);  // the observer wins over the forced length
  ASSERT_TRUE(h.run());
  EXPECT_EQ(h.observer.finished.at("a").tokens.size(), 2u);
  EXPECT_EQ(h.observer.finished.at("a").reason, FinishReason::Stop);
  EXPECT_EQ(stop.tokens, 2);
}

TEST(Engine, AbortFreesKvAtOnce) {
  EngineHarness h(policy("vllm"), KvConfig{4, 64, 16, 0});
  RequestId a = h.add("a", make_prompt(30, 1), 20);
  RequestId b = h.add("b", make_prompt(9, 2), 20);
  RequestId c = h.add("c", make_prompt(9, 3), 20);
  h.engine->step();
  EXPECT_EQ(h.kv.table(a).num_device, 8);
  int32_t free_before = h.kv.usage().device.free;
  EXPECT_TRUE(h.engine->abort_request(a));
  EXPECT_FALSE(h.kv.has(a));
  EXPECT_EQ(h.kv.usage().device.free, free_before + 8);
  EXPECT_EQ(h.observer.finished.at("a").reason, FinishReason::Abort);
  EXPECT_FALSE(h.engine->abort_request(a));  // already gone
  EXPECT_FALSE(h.engine->abort_request(12345));
  EXPECT_TRUE(h.engine->abort_request(c));
  h.kv.check_invariants();
  h.scheduler->check_invariants(h.engine->requests(), h.kv);
  ASSERT_TRUE(h.run());
  EXPECT_EQ(h.observer.finished.at("b").tokens.size(), 20u);
  EXPECT_EQ(h.engine->counters().finished_requests, 3);
  EXPECT_EQ(h.kv.usage().device.free, 64);
  (void)b;
}

TEST(Engine, ReportsPlansToObservers) {
  EngineHarness h(policy("orca"), KvConfig{4, 64, 0, 0});
  h.add("a", make_prompt(5, 1), 4, 4);
  h.add("b", make_prompt(7, 2), 4, 2);
  ASSERT_TRUE(h.run());
  EXPECT_EQ(static_cast<int64_t>(h.observer.plans.size()), h.engine->counters().iterations);
  EXPECT_EQ(h.observer.iterations.size(), h.observer.plans.size());
  ASSERT_FALSE(h.observer.plans.empty());
  EXPECT_EQ(h.observer.plans[0].num_tokens(), 12);
  EXPECT_EQ(h.observer.iterations[0].batch_size, 2);
  EXPECT_EQ(h.executor.iterations, h.engine->counters().iterations);
}

}  // namespace
}  // namespace seer

namespace seer {
namespace {

// An observer that aborts other requests (and itself) from inside on_token and
// on_plan: the engine must defer those aborts to the end of the step.
class Aborter : public EngineObserver {
 public:
  Engine* engine = nullptr;
  RequestId victim_on_plan = -1, victim_on_token = -1;
  void on_plan(const StepPlan&) override {
    if (victim_on_plan >= 0) {
      EXPECT_TRUE(engine->abort_request(std::exchange(victim_on_plan, -1)));
    }
  }
  bool on_token(const Request& r, const SampledToken&) override {
    if (victim_on_token >= 0) {
      EXPECT_TRUE(engine->abort_request(std::exchange(victim_on_token, -1)));
    }
    return false;
  }
};

TEST(Engine, AbortFromObserverIsDeferredSafely) {
  EngineHarness h(policy("orca"), KvConfig{4, 64, 0, 0});
  Aborter ab;
  ab.engine = h.engine.get();
  h.engine->add_observer(&ab);
  RequestId a = h.add("a", make_prompt(5, 1), 6, 6);
  RequestId b = h.add("b", make_prompt(5, 2), 6, 6);
  RequestId c = h.add("c", make_prompt(5, 3), 6, 6);
  ab.victim_on_plan = b;  // b is in the plan being executed
  ab.victim_on_token = a;  // a aborts itself while its token is committed
  h.engine->step();
  EXPECT_EQ(h.observer.finished.at("a").reason, FinishReason::Abort);
  EXPECT_EQ(h.observer.finished.at("b").reason, FinishReason::Abort);
  EXPECT_TRUE(h.observer.finished.at("b").tokens.empty());
  EXPECT_FALSE(h.kv.has(a));
  EXPECT_FALSE(h.kv.has(b));
  ASSERT_TRUE(h.run());
  EXPECT_EQ(h.observer.finished.at("c").tokens.size(), 6u);
  EXPECT_EQ(h.observer.duplicate_finishes, 0);
  (void)c;
}

}  // namespace
}  // namespace seer
