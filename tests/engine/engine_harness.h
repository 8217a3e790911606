#pragma once
// An Engine with a scheduler preset, a KV manager and the FakeExecutor, plus an
// observer that keeps what finished requests produced.
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "engine/fake_executor.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "scheduler/scheduler.h"

namespace seer::testing {

struct Finished {
  std::vector<int32_t> tokens;
  FinishReason reason = FinishReason::None;
  int32_t preemptions = 0;
  std::vector<double> token_times;
  double first_scheduled = -1;
};

class RecordingObserver : public EngineObserver {
 public:
  void on_finished(const Request& r) override {
    Finished f{r.output_tokens, r.finish_reason, r.preemptions, r.token_times_s, r.first_scheduled_s};
    if (!finished.emplace(r.external_id, std::move(f)).second) ++duplicate_finishes;
  }
  void on_plan(const StepPlan& p) override { plans.push_back(p); }
  void on_iteration(const IterationStats& s) override { iterations.push_back(s); }

  std::map<std::string, Finished> finished;
  std::vector<StepPlan> plans;
  std::vector<IterationStats> iterations;
  int duplicate_finishes = 0;
};

class EngineHarness {
 public:
  // With `cache`, the engine keeps a conversation cache over `kv` with that config.
  EngineHarness(const SchedulerConfig& sc, const KvConfig& kc, EngineConfig ec = {}, int32_t vocab = 1000,
                bool simulated = false, std::optional<ConversationCacheConfig> cache_config = std::nullopt)
      : kv(kc), scheduler(make_scheduler(sc)), executor(kc, vocab, simulated) {
    ec.check_invariants = true;
    if (cache_config) {
      scheduler->conversations().attach(std::make_unique<ConversationCache>(kv, std::move(*cache_config)));
      cache = scheduler->conversations().planning_cache();
    }
    if (simulated)
      engine = std::make_unique<Engine>(*scheduler, executor, kv, virtual_clock, ec);
    else
      engine = std::make_unique<Engine>(*scheduler, executor, kv, manual_clock, ec);
    engine->set_observer(&observer);
  }

  RequestId add(const std::string& id, std::vector<int32_t> prompt, int32_t max_tokens, int32_t forced = -1) {
    Request r;
    r.external_id = id;
    r.prompt_tokens = std::move(prompt);
    r.sampling.max_tokens = max_tokens;
    r.forced_output_len = forced;
    r.arrival_s = engine->clock().now();
    return engine->add_request(std::move(r));
  }

  // Steps until nothing is left; false if it takes more than max_steps.
  bool run(int max_steps = 100000) {
    for (int i = 0; i < max_steps; ++i) {
      if (!engine->has_unfinished()) return true;
      engine->step();
    }
    return !engine->has_unfinished();
  }

  VirtualClock virtual_clock;
  VirtualClock manual_clock;  // a clock that only tests move, for a non-simulated executor
  KvManager kv;
  std::unique_ptr<Scheduler> scheduler;
  ConversationCache* cache = nullptr;  // the scheduler's, when given a config
  FakeExecutor executor;
  RecordingObserver observer;
  std::unique_ptr<Engine> engine;
};

// A prompt of `len` tokens derived from `seed`.
inline std::vector<int32_t> make_prompt(int32_t len, int32_t seed) {
  std::vector<int32_t> p;
  for (int32_t i = 0; i < len; ++i) p.push_back((seed * 131 + i * 17) % 997);
  return p;
}

}  // namespace seer::testing
