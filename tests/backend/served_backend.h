#pragma once
// A real backend served in-process for the backend tests that compare outputs end to
// end: one scheduling policy, the conversation cache, the ModelExecutor, the engine
// with its invariant checkers after every step. Requests are greedy with logprobs.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backend/backend.h"
#include "common/clock.h"
#include "engine/engine.h"
#include "kv/conversation_cache.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"

namespace seer::testing {

struct ServedOutput {
  std::vector<int32_t> tokens;
  std::vector<float> logprobs;
};

class OutputRecorder : public EngineObserver {
 public:
  void on_finished(const Request& r) override { outputs[r.id] = last = {r.output_tokens, r.output_logprobs}; }
  ServedOutput last;
  std::map<RequestId, ServedOutput> outputs;
};

struct ServedBackend {
  ServedBackend(std::unique_ptr<Backend> be, const std::string& policy, ConversationCacheConfig cache_config,
                int32_t token_budget = 0)
      : backend(std::move(be)), kv(std::make_unique<KvManager>(backend->kv_config())) {
    SchedulerConfig sc;
    sc.policy = policy;
    sc.token_budget = token_budget;
    scheduler = make_scheduler(sc);
    scheduler->conversations().attach(std::make_unique<ConversationCache>(*kv, cache_config));
    cache = scheduler->conversations().planning_cache();
    executor = std::make_unique<ModelExecutor>(*backend, 7);
    EngineConfig ec;
    ec.check_invariants = true;
    engine = std::make_unique<Engine>(*scheduler, *executor, *kv, clock, ec);
    engine->set_observer(&recorder);
  }

  ServedOutput run(std::vector<int32_t> prompt, const std::string& conversation, int32_t max_tokens) {
    add(std::move(prompt), conversation, max_tokens);
    drain();
    return recorder.last;
  }
  RequestId add(std::vector<int32_t> prompt, const std::string& conversation, int32_t max_tokens) {
    Request r;
    r.prompt_tokens = std::move(prompt);
    r.conversation = conversation;
    r.continues_conversation = !conversation.empty();
    r.sampling.temperature = 0;
    r.sampling.logprobs = true;
    r.sampling.max_tokens = max_tokens;
    r.sampling.ignore_eos = true;
    return engine->add_request(std::move(r));
  }
  // Steps until every request finished, noting the most device K/V bytes in use.
  void drain() {
    while (engine->has_unfinished()) {
      engine->step();
      peak_kv_bytes = std::max(peak_kv_bytes, int64_t{kv->usage().device.used()} * kv->config().bytes_per_block);
    }
  }
  // Evicts `blocks` device blocks from the cache, performing its copies (swap-outs)
  // as an executor would.
  void evict(int32_t blocks) {
    std::vector<KvOp> ops;
    cache->make_room(blocks, clock.now(), ops);
    for (const KvOp& op : ops) {
      ASSERT_EQ(op.kind, KvOpKind::SwapOut);
      backend->swap_out(op.src, op.dst);
    }
    kv->check_invariants();
    cache->check_invariants();
  }

  std::unique_ptr<Backend> backend;
  std::unique_ptr<KvManager> kv;
  std::unique_ptr<Scheduler> scheduler;
  ConversationCache* cache = nullptr;  // the scheduler's
  std::unique_ptr<ModelExecutor> executor;
  WallClock clock;
  OutputRecorder recorder;
  std::unique_ptr<Engine> engine;
  int64_t peak_kv_bytes = 0;
};

// Same greedy tokens, and logprobs within `tolerance`.
inline void expect_same_output(const ServedOutput& a, const ServedOutput& b, double tolerance) {
  ASSERT_EQ(a.tokens, b.tokens);
  ASSERT_EQ(a.logprobs.size(), b.logprobs.size());
  for (size_t i = 0; i < a.logprobs.size(); ++i) EXPECT_NEAR(a.logprobs[i], b.logprobs[i], tolerance) << i;
}

}  // namespace seer::testing
