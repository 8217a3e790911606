// An exception inside an engine step ends the requests in flight with a clear
// error, is counted in /metrics, and the server keeps serving (issue 34 item 7).
#include <algorithm>
#include <atomic>
#include <stdexcept>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"
#include "server/async_engine.h"
#include "server/fakes.h"

namespace seer::server {
namespace {

using namespace std::chrono_literals;

// The scripted executor, except that the first step decoding two requests throws
// the way an invariant check does (so both are in flight when it fails).
class FailingOnceExecutor final : public Executor {
 public:
  FailingOnceExecutor() : inner_("abcdefgh", 1ms) {}
  StepResult execute(const StepPlan& plan) override {
    int decoding = 0;  // chunks of requests sent in an earlier plan (vllm: prompts in one chunk)
    for (const auto& c : plan.chunks)
      decoding += std::none_of(plan.new_requests.begin(), plan.new_requests.end(),
                               [&](const NewRequestData& n) { return n.request == c.request; });
    if (decoding >= 2 && !failed_.exchange(true)) throw std::logic_error("kv: block 7 is owned twice (injected)");
    return inner_.execute(plan);
  }
  bool simulated() const override { return false; }

 private:
  testing::ScriptedExecutor inner_;
  std::atomic<bool> failed_{false};
};

struct Server {
  Server() : kv(KvConfig{16, 64, 0, 0}) {
    SchedulerConfig sc;
    sc.policy = "vllm";
    scheduler = make_scheduler(sc);
    EngineConfig ec;
    ec.max_model_len = 1024;
    engine = std::make_unique<Engine>(*scheduler, executor, kv, clock, ec);
    async = std::make_unique<AsyncEngine>(*engine, tokenizer, metrics, AsyncEngineOptions{64});
  }
  std::shared_ptr<RequestStream> submit(int max_tokens) {
    Request r;
    r.prompt_tokens = tokenizer.encode("hi", true);
    r.sampling.max_tokens = max_tokens;
    return async->submit(std::move(r));
  }
  testing::CharTokenizer tokenizer;
  FailingOnceExecutor executor;
  KvManager kv;
  WallClock clock;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Engine> engine;
  ServerMetrics metrics;
  std::unique_ptr<AsyncEngine> async;
};

StreamEvent final_event(RequestStream& s, std::string* text = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline)
    for (auto& e : s.take(20ms)) {
      if (text) *text += e.text;
      if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) return e;
    }
  ADD_FAILURE() << "the stream did not finish";
  return {};
}

TEST(AsyncEngineRecovery, AFailingStepEndsItsRequestsWithAnErrorAndTheServerServesOn) {
  Server s;
  auto a = s.submit(50), b = s.submit(50);
  const StreamEvent ea = final_event(*a), eb = final_event(*b);
  for (const StreamEvent* e : {&ea, &eb}) {
    EXPECT_EQ(e->kind, StreamEvent::Kind::Finished);
    EXPECT_EQ(e->finish_reason, FinishReason::Error);
    EXPECT_NE(e->message.find("block 7 is owned twice"), std::string::npos) << e->message;
    EXPECT_NE(e->message.find("the server recovered"), std::string::npos) << e->message;
  }
  EXPECT_FALSE(s.async->failed());
  EXPECT_EQ(s.kv.usage().device.used(), 0);

  std::string text;
  const StreamEvent after = final_event(*s.submit(5), &text);
  EXPECT_EQ(after.finish_reason, FinishReason::Length);
  EXPECT_EQ(text, "abcde");
  s.async->shutdown(0ms);
  EXPECT_NE(s.metrics.render().find("seer_engine_recoveries_total 1"), std::string::npos);
  EXPECT_NE(s.metrics.render().find("seer_kv_blocks_used 0"), std::string::npos);
}

}  // namespace
}  // namespace seer::server
