// The engine on its own thread: streaming deltas, stop strings, EOS, cancellation
// freeing KV, the bounded queue (429) and shutdown.
#include <mutex>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"
#include "server/api_error.h"
#include "server/async_engine.h"
#include "server/fakes.h"

namespace seer::server {
namespace {

using namespace std::chrono_literals;
using testing::CharTokenizer;
using testing::ScriptedExecutor;

struct Harness {
  explicit Harness(std::string script, std::chrono::microseconds step = {}, size_t max_waiting = 1024,
                   int32_t max_batch = 256)
      : executor(std::move(script), step), kv(KvConfig{16, 256, 0, 0}) {
    SchedulerConfig sc;
    sc.policy = "vllm";
    sc.max_batch_size = max_batch;
    scheduler = make_scheduler(sc);
    EngineConfig ec;
    ec.max_model_len = 2048;
    ec.eos_ids = {0};
    engine = std::make_unique<Engine>(*scheduler, executor, kv, clock, ec);
    async = std::make_unique<AsyncEngine>(*engine, tokenizer, metrics, AsyncEngineOptions{max_waiting});
  }
  Request request(const std::string& prompt, int max_tokens, std::vector<std::string> stop = {}, bool logprobs = false) {
    Request r;
    r.prompt_tokens = tokenizer.encode(prompt, true);
    r.sampling.max_tokens = max_tokens;
    r.sampling.stop = std::move(stop);
    r.sampling.logprobs = logprobs;
    return r;
  }

  CharTokenizer tokenizer;
  ScriptedExecutor executor;
  KvManager kv;
  WallClock clock;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Engine> engine;
  ServerMetrics metrics;
  std::unique_ptr<AsyncEngine> async;
};

struct Collected {
  std::string text;
  std::vector<StreamEvent> events;
  StreamEvent final;
};

Collected collect(RequestStream& s, std::chrono::milliseconds limit = 5000ms) {
  Collected c;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline) {
    for (auto& e : s.take(20ms)) {
      c.text += e.text;
      c.events.push_back(e);
      if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) {
        c.final = e;
        return c;
      }
    }
  }
  ADD_FAILURE() << "the stream did not finish";
  return c;
}

TEST(AsyncEngine, StreamsDeltasThenFinishedWithUsage) {
  Harness h("hello world ");
  auto s = h.async->submit(h.request("ab", 5, {}, true));
  Collected c = collect(*s);
  ASSERT_EQ(c.events.front().kind, StreamEvent::Kind::Accepted);
  EXPECT_EQ(c.text, "hello");
  EXPECT_EQ(c.final.kind, StreamEvent::Kind::Finished);
  EXPECT_EQ(c.final.finish_reason, FinishReason::Length);
  EXPECT_EQ(c.final.usage.prompt_tokens, 3);  // BOS + 2
  EXPECT_EQ(c.final.usage.completion_tokens, 5);
  size_t logprobs = 0;
  for (const auto& e : c.events) logprobs += e.logprobs.size();
  EXPECT_EQ(logprobs, 5u);
  EXPECT_TRUE(s->closed());
  EXPECT_EQ(h.async->num_in_flight(), 0u);
}

TEST(AsyncEngine, StopStringEndsTheRequestBeforeIt) {
  Harness h("say STOP now");
  auto s = h.async->submit(h.request("x", 50, {"STOP"}));
  Collected c = collect(*s);
  EXPECT_EQ(c.text, "say ");
  EXPECT_EQ(c.final.finish_reason, FinishReason::Stop);
  EXPECT_LT(c.final.usage.completion_tokens, 50);
}

TEST(AsyncEngine, EosStopsWithoutTextUnlessIgnored) {
  Harness h("ab$cd");
  auto s = h.async->submit(h.request("x", 20));
  Collected c = collect(*s);
  EXPECT_EQ(c.text, "ab");
  EXPECT_EQ(c.final.finish_reason, FinishReason::Stop);
  Request r = h.request("x", 5);
  r.sampling.ignore_eos = true;
  Collected all = collect(*h.async->submit(std::move(r)));
  EXPECT_EQ(all.text, "abcd");  // the EOS token is generated but has no text
  EXPECT_EQ(all.final.usage.completion_tokens, 5);
}

TEST(AsyncEngine, CancelAbortsAndFreesKv) {
  Harness h("z", 1ms);
  auto s = h.async->submit(h.request("prompt", 1500));
  // Wait for some output, then cancel.
  std::string text;
  while (text.size() < 3)
    for (auto& e : s->take(20ms)) text += e.text;
  h.async->cancel(s);
  Collected c = collect(*s);
  EXPECT_EQ(c.final.finish_reason, FinishReason::Abort);
  EXPECT_LT(c.final.usage.completion_tokens, 1500);
  h.async->shutdown(0ms);
  EXPECT_EQ(h.kv.usage().device.used(), 0);
  EXPECT_EQ(h.engine->has_unfinished(), false);
}

TEST(AsyncEngine, EngineRejectionBecomesRejectedEvent) {
  Harness h("a");
  Request r = h.request("x", 3000);  // past max_model_len
  Collected c = collect(*h.async->submit(std::move(r)));
  EXPECT_EQ(c.final.kind, StreamEvent::Kind::Rejected);
  EXPECT_EQ(c.final.status, 400);
  EXPECT_NE(c.final.message.find("context"), std::string::npos);
}

TEST(AsyncEngine, FullQueueThrows429) {
  // One request runs at a time, slowly; the queue holds two more.
  Harness h("q", 2ms, /*max_waiting=*/2, /*max_batch=*/1);
  std::vector<std::shared_ptr<RequestStream>> accepted;
  int rejected = 0;
  for (int i = 0; i < 8; ++i) {
    try {
      accepted.push_back(h.async->submit(h.request("p", 200)));
    } catch (const ApiError& e) {
      EXPECT_EQ(e.status(), 429);
      ++rejected;
    }
  }
  EXPECT_GE(rejected, 1);
  EXPECT_LE(accepted.size(), 4u);
  h.async->shutdown(0ms);
}

TEST(AsyncEngine, ShutdownAbortsInFlightAndRefusesNewWork) {
  Harness h("w", 1ms);
  auto s = h.async->submit(h.request("p", 100000 / 100));
  while (s->take(20ms).empty()) {
  }
  size_t aborted = h.async->shutdown(10ms);
  EXPECT_EQ(aborted, 1u);
  Collected c = collect(*s);
  EXPECT_EQ(c.final.finish_reason, FinishReason::Abort);
  EXPECT_FALSE(h.async->accepting());
  try {
    h.async->submit(h.request("p", 5));
    FAIL() << "accepted after shutdown";
  } catch (const ApiError& e) {
    EXPECT_EQ(e.status(), 503);
  }
  EXPECT_EQ(h.kv.usage().device.used(), 0);
}

TEST(AsyncEngine, GracefulShutdownLetsShortWorkFinish) {
  Harness h("g");
  auto s = h.async->submit(h.request("p", 20));
  EXPECT_EQ(h.async->shutdown(5000ms), 0u);
  Collected c = collect(*s);
  EXPECT_EQ(c.final.finish_reason, FinishReason::Length);
}

double series_value(const ServerMetrics& m, const std::string& series) {
  std::istringstream in(m.render());
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

// /metrics is never behind what a client was sent: when a token is delivered the
// request's KV shows as used, and when its end is delivered the KV shows as freed and
// the request as counted. The listener runs on the engine thread at each delivery.
TEST(AsyncEngine, EventsAreDeliveredAfterTheStateBehindThemIsPublished) {
  // One request at a time: the second waits behind the first, which holds KV until
  // it is cancelled after the second's listener is in place.
  Harness h("abcdefgh", 1ms, 1024, /*max_batch=*/1);
  auto first = h.async->submit(h.request("p", 1500));
  std::string first_text;
  while (first_text.empty())
    for (auto& e : first->take(20ms)) first_text += e.text;
  auto second = h.async->submit(h.request("q", 8));
  struct Seen {
    bool ended;
    double kv_used, finished, tokens;
  };
  std::mutex mutex;
  std::vector<Seen> seen;
  second->set_listener([&] {
    std::lock_guard lock(mutex);
    seen.push_back({second->closed(), series_value(h.metrics, "seer_kv_blocks_used"),
                    series_value(h.metrics, "seer_requests_finished_total{reason=\"length\"}"),
                    series_value(h.metrics, "seer_generation_tokens_total")});
  });
  h.async->cancel(first);
  EXPECT_EQ(collect(*first).final.finish_reason, FinishReason::Abort);
  Collected c = collect(*second);
  ASSERT_EQ(c.final.finish_reason, FinishReason::Length);
  h.async->shutdown(0ms);
  std::lock_guard lock(mutex);
  ASSERT_GE(seen.size(), 2u);
  const Seen& end = seen.back();
  ASSERT_TRUE(end.ended);
  EXPECT_EQ(end.kv_used, 0);
  EXPECT_EQ(end.finished, 1);
  EXPECT_EQ(end.tokens, series_value(h.metrics, "seer_generation_tokens_total"));
  for (size_t i = 0; i + 1 < seen.size(); ++i) {
    EXPECT_FALSE(seen[i].ended);
    if (seen[i].tokens == end.tokens) continue;  // from the last step, which freed the KV
    EXPECT_GT(seen[i].kv_used, 0) << "event " << i << " was delivered before its KV was published";
  }
}

TEST(AsyncEngine, MetricsSeeEveryToken) {
  Harness h("m");
  collect(*h.async->submit(h.request("p", 6)));
  collect(*h.async->submit(h.request("p", 4)));
  h.async->shutdown(0ms);
  std::string text = h.metrics.render();
  EXPECT_NE(text.find("seer_time_to_first_token_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("seer_time_between_tokens_seconds_count 8"), std::string::npos);
  EXPECT_NE(text.find("seer_e2e_request_latency_seconds_count 2"), std::string::npos);
  EXPECT_NE(text.find("seer_generation_tokens_total 10"), std::string::npos);
  EXPECT_NE(text.find("seer_kv_blocks_used 0"), std::string::npos);
}

}  // namespace
}  // namespace seer::server
