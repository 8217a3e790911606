// n choices of one prompt (issue 51): with prefix reuse the prompt is prefilled once
// and every choice shares its blocks; each choice has its own stream and usage;
// cancelling every stream ends them all, even while the shared prefill runs; and
// usage.cached_tokens counts the prompt tokens the cache served.
#include <atomic>
#include <memory>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"
#include "server/async_engine.h"
#include "server/fakes.h"

namespace seer::server {
namespace {

using namespace std::chrono_literals;
using testing::CharTokenizer;
using testing::ScriptedExecutor;

// Counts the prompt tokens the plans compute: chunk positions below the prompt length.
class PromptCounter : public EngineObserver {
 public:
  explicit PromptCounter(int32_t prompt_len) : prompt_len_(prompt_len) {}
  void on_plan(const StepPlan& plan) override {
    for (const ScheduledChunk& c : plan.chunks)
      if (c.start < prompt_len_) computed += std::min(c.start + c.num_tokens, prompt_len_) - c.start;
  }
  std::atomic<int64_t> computed{0};

 private:
  int32_t prompt_len_;
};

struct Harness {
  Harness(bool prefix_reuse, int32_t prompt_len, std::chrono::microseconds step = {})
      : executor("abcdefgh", step), kv(KvConfig{16, 256, 0, 0}), counter(prompt_len) {
    SchedulerConfig sc;
    sc.policy = "vllm";
    scheduler = make_scheduler(sc);
    ConversationCacheConfig cc;
    cc.prefix_reuse = prefix_reuse;
    cc.host_tier = false;
    scheduler->conversations().attach(std::make_unique<ConversationCache>(kv, cc));
    EngineConfig ec;
    ec.max_model_len = 2048;
    ec.eos_ids = {0};
    ec.check_invariants = true;
    engine = std::make_unique<Engine>(*scheduler, executor, kv, clock, ec);
    engine->add_observer(&counter);
    async = std::make_unique<AsyncEngine>(*engine, tokenizer, metrics);
  }
  ~Harness() { async.reset(); }
  Request request(const std::string& prompt, int max_tokens, std::optional<uint64_t> seed = std::nullopt) {
    Request r;
    r.prompt_tokens = tokenizer.encode(prompt, true);
    r.sampling.max_tokens = max_tokens;
    r.sampling.seed = seed;
    return r;
  }

  CharTokenizer tokenizer;
  ScriptedExecutor executor;
  KvManager kv;
  WallClock clock;
  PromptCounter counter;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Engine> engine;
  ServerMetrics metrics;
  std::unique_ptr<AsyncEngine> async;
};

StreamEvent finish_of(RequestStream& s, std::string* text = nullptr) {
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (std::chrono::steady_clock::now() < deadline)
    for (auto& e : s.take(20ms)) {
      if (text) *text += e.text;
      if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) return e;
    }
  ADD_FAILURE() << "the stream did not finish";
  return {};
}

const std::string kPrompt(39, 'p');  // 40 tokens with BOS: two full blocks and a partial third
constexpr int32_t kPromptLen = 40;
constexpr int kChoices = 4;

TEST(AsyncEngineChoices, FourChoicesComputeThePromptOnceAndShareItsBlocks) {
  Harness h(/*prefix_reuse=*/true, kPromptLen);
  std::vector<Request> choices(kChoices, h.request(kPrompt, 5, 11));
  auto streams = h.async->submit_choices(std::move(choices));
  ASSERT_EQ(streams.size(), static_cast<size_t>(kChoices));
  for (auto& s : streams) {
    std::string text;
    StreamEvent e = finish_of(*s, &text);
    EXPECT_EQ(e.kind, StreamEvent::Kind::Finished);
    EXPECT_EQ(e.finish_reason, FinishReason::Length);
    EXPECT_EQ(text, "abcde");
    EXPECT_EQ(e.usage.prompt_tokens, kPromptLen);
    EXPECT_EQ(e.usage.completion_tokens, 5);
    EXPECT_EQ(e.usage.cached_tokens, 0);  // the prompt's one prefill found nothing cached
  }
  // One prefill of the prompt, then each choice computes only the last prompt token
  // (a cached prefix leaves one token to sample from): 40 + 4, not 4 x 40.
  EXPECT_EQ(h.counter.computed.load(), kPromptLen + kChoices);
  const CacheCounters& c = h.scheduler->conversations().cache()->counters();
  EXPECT_EQ(c.hit_tokens_device, kChoices * (kPromptLen - 1));
  EXPECT_EQ(h.async->num_in_flight(), 0u);
}

TEST(AsyncEngineChoices, FourSeparateRequestsComputeThePromptFourTimes) {
  // Slow steps: all four arrive while the first still runs (only finished requests are cached).
  Harness h(/*prefix_reuse=*/true, kPromptLen, 5ms);
  std::vector<std::shared_ptr<RequestStream>> streams;
  for (int i = 0; i < kChoices; ++i) streams.push_back(h.async->submit(h.request(kPrompt, 5)));
  for (auto& s : streams) EXPECT_EQ(finish_of(*s).kind, StreamEvent::Kind::Finished);
  EXPECT_EQ(h.counter.computed.load(), kChoices * kPromptLen);
}

TEST(AsyncEngineChoices, WithoutPrefixReuseEachChoicePrefillsItsOwnCopy) {
  Harness h(/*prefix_reuse=*/false, kPromptLen);
  auto streams = h.async->submit_choices(std::vector<Request>(kChoices, h.request(kPrompt, 3)));
  for (auto& s : streams) EXPECT_EQ(finish_of(*s).finish_reason, FinishReason::Length);
  EXPECT_EQ(h.counter.computed.load(), kChoices * kPromptLen);
}

TEST(AsyncEngineChoices, CancellingEveryChoiceEndsThemAllAndFreesKv) {
  Harness h(/*prefix_reuse=*/true, kPromptLen, 20ms);
  auto streams = h.async->submit_choices(std::vector<Request>(kChoices, h.request(kPrompt, 500)));
  for (auto& s : streams) h.async->cancel(s);
  for (auto& s : streams) {
    StreamEvent e = finish_of(*s);
    EXPECT_TRUE(e.kind == StreamEvent::Kind::Rejected || e.finish_reason == FinishReason::Abort);
  }
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (h.async->num_in_flight() > 0 && std::chrono::steady_clock::now() < deadline) std::this_thread::yield();
  EXPECT_EQ(h.async->num_in_flight(), 0u);
}

TEST(AsyncEngineChoices, ARepeatedPromptReportsItsCachedTokens) {
  Harness h(/*prefix_reuse=*/true, kPromptLen);
  auto first = h.async->submit(h.request(kPrompt, 2));
  EXPECT_EQ(finish_of(*first).usage.cached_tokens, 0);
  auto second = h.async->submit(h.request(kPrompt, 2));
  EXPECT_EQ(finish_of(*second).usage.cached_tokens, kPromptLen - 1);
}

}  // namespace
}  // namespace seer::server
