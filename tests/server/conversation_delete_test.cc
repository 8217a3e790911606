// DELETE /v1/conversations/{id} through the engine thread (docs/pensieve.md): an
// idle conversation past its TTL is gone even when no step ran since (404), a
// cached one is forgotten once (200, then 404), and one whose turn is running is
// forgotten too, its KV freed when the turn ends. The clock is the test's: no
// waiting for expiry.
#include <atomic>
#include <memory>
#include <sstream>

#include <gtest/gtest.h>

#include "engine/engine.h"
#include "kv/conversation_cache.h"
#include "kv/conversation_key.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"
#include "server/api_keys.h"
#include "server/async_engine.h"
#include "server/conversation_handler.h"
#include "server/fakes.h"

namespace seer::server {
namespace {

using namespace std::chrono_literals;
using testing::CharTokenizer;
using testing::ScriptedExecutor;

constexpr double kTtl = 10;

// A clock the test moves; read from the engine thread.
class SteppedClock final : public Clock {
 public:
  double now() const override { return now_.load(); }
  void advance(double s) { now_.store(now_.load() + s); }

 private:
  std::atomic<double> now_{0};
};

struct Server {
  explicit Server(std::chrono::microseconds step = {}) : executor("abcdefgh", step), kv(KvConfig{16, 256, 0, 0}) {
    SchedulerConfig sc;
    sc.policy = "pensieve-gpu";
    scheduler = make_scheduler(sc);
    ConversationCacheConfig cc;
    cc.host_tier = false;
    cc.idle_expiry_s = kTtl;
    scheduler->conversations().attach(std::make_unique<ConversationCache>(kv, cc));
    EngineConfig ec;
    ec.max_model_len = 2048;
    ec.check_invariants = true;
    engine = std::make_unique<Engine>(*scheduler, executor, kv, clock, ec);
    async = std::make_unique<AsyncEngine>(*engine, tokenizer, metrics);
  }
  ~Server() { async->shutdown(0ms); }

  std::shared_ptr<RequestStream> send(const std::string& conversation, const std::string& message, int max_tokens) {
    Request r;
    r.prompt_tokens = tokenizer.encode(message, true);
    r.tenant = kAnonymousTenant;
    r.conversation = conversation_key(kAnonymousTenant, conversation);
    r.continues_conversation = true;
    r.fresh_start_tokens = 1;  // BOS
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    return async->submit(std::move(r));
  }

  int status_of_delete(const std::string& id) {
    HttpResponse res;
    handle_delete_conversation(*async, kAnonymousTenant, id, res);
    return res.status;
  }

  CharTokenizer tokenizer;
  ScriptedExecutor executor;
  KvManager kv;
  SteppedClock clock;
  std::unique_ptr<Scheduler> scheduler;
  std::unique_ptr<Engine> engine;
  ServerMetrics metrics;
  std::unique_ptr<AsyncEngine> async;
};

// The stream's last event (Finished or Rejected), within a deadline.
StreamEvent final_event(RequestStream& s, std::chrono::milliseconds limit = 10000ms) {
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline)
    for (auto& e : s.take(20ms))
      if (e.kind == StreamEvent::Kind::Finished || e.kind == StreamEvent::Kind::Rejected) return e;
  ADD_FAILURE() << "the stream did not finish";
  return {};
}

double series_value(const ServerMetrics& m, const std::string& series) {
  std::istringstream in(m.render());
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return -1;
}

TEST(ConversationDelete, ForgetsACachedConversationOnce) {
  Server s;
  ASSERT_EQ(final_event(*s.send("c", "hello", 4)).finish_reason, FinishReason::Length);
  EXPECT_EQ(series_value(s.metrics, "seer_kv_blocks_used"), 0);  // requests hold none
  EXPECT_GT(series_value(s.metrics, "seer_kv_blocks_cached"), 0);
  EXPECT_EQ(s.status_of_delete("c"), 200);
  EXPECT_EQ(s.status_of_delete("c"), 404);
  EXPECT_EQ(s.status_of_delete("other"), 404);
  // The next turn starts afresh: only its own prompt (BOS + 3).
  EXPECT_EQ(final_event(*s.send("c", "hey", 2)).usage.prompt_tokens, 4);
}

TEST(ConversationDelete, AnExpiredConversationIsNotFoundOnAnIdleServer) {
  Server s;
  ASSERT_EQ(final_event(*s.send("c", "hello", 4)).finish_reason, FinishReason::Length);
  s.clock.advance(kTtl + 1);  // no step runs in between
  EXPECT_EQ(s.status_of_delete("c"), 404);
}

// Its next turn is refused (conversation_not_found), never continued with an empty
// history; the id then starts afresh.
TEST(ConversationDelete, AnExpiredConversationIsNotContinued) {
  Server s;
  ASSERT_EQ(final_event(*s.send("c", "hello", 4)).usage.prompt_tokens, 6);
  s.clock.advance(kTtl - 1);
  // Within the TTL: history (6 + 4) + the new message without its BOS (3).
  EXPECT_EQ(final_event(*s.send("c", "hey", 2)).usage.prompt_tokens, 13);
  s.clock.advance(kTtl + 1);
  StreamEvent refused = final_event(*s.send("c", "hey", 2));
  EXPECT_EQ(refused.kind, StreamEvent::Kind::Rejected);
  EXPECT_EQ(refused.status, 404);
  EXPECT_EQ(refused.code, "conversation_not_found");
  EXPECT_EQ(final_event(*s.send("c", "hey", 2)).usage.prompt_tokens, 4);
}

// A turn whose history + message + max_tokens overflow the context is refused with
// the code the docs promise (context_length_exceeded), not a generic invalid_request.
TEST(ConversationDelete, AStatefulContextOverflowIsContextLengthExceeded) {
  Server s;
  ASSERT_EQ(final_event(*s.send("c", "hello", 1000)).usage.prompt_tokens, 6);
  StreamEvent refused = final_event(*s.send("c", "hey", 1100));  // 1006 + 3 + 1100 > 2048
  EXPECT_EQ(refused.kind, StreamEvent::Kind::Rejected);
  EXPECT_EQ(refused.status, 400);
  EXPECT_EQ(refused.code, "context_length_exceeded");
  EXPECT_NE(refused.message.find("exceeds the context length of 2048 tokens"), std::string::npos) << refused.message;
}

TEST(ConversationDelete, DeleteDuringARunningTurnSucceedsAndLeavesNoKv) {
  Server s(1ms);  // a paced executor, so the turn is still running when DELETE arrives
  ASSERT_EQ(final_event(*s.send("c", "hello", 4)).finish_reason, FinishReason::Length);
  auto turn = s.send("c", "more", 400);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  std::string text;
  while (text.empty() && std::chrono::steady_clock::now() < deadline)
    for (auto& e : turn->take(20ms)) text += e.text;
  ASSERT_FALSE(text.empty()) << "the turn produced no output";
  EXPECT_EQ(s.status_of_delete("c"), 200);
  EXPECT_EQ(s.status_of_delete("c"), 404);
  StreamEvent end = final_event(*turn);
  EXPECT_EQ(end.finish_reason, FinishReason::Length);
  EXPECT_EQ(end.usage.completion_tokens, 400);
  // The end is delivered after the state behind it is published.
  EXPECT_EQ(series_value(s.metrics, "seer_kv_blocks_used"), 0);
  EXPECT_EQ(series_value(s.metrics, "seer_conversations_cached"), 0);
  EXPECT_EQ(s.status_of_delete("c"), 404);
}

}  // namespace
}  // namespace seer::server
