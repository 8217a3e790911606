#pragma once
// The parts one engine runs on (docs/architecture.md §2), wired the same way for
// `seer serve` (server/serving_stack.h, a ModelExecutor on the wall clock) and
// `seer sim` (sim/sim_engine.h, a SimExecutor on a virtual clock): the KV manager,
// the scheduler with the conversation cache it owns, the length predictor and the
// draft proposer, and the Engine over them. Each front end derives the parts from
// its flags and hardware; this is the one place they are put together.
#include <memory>

#include "common/clock.h"
#include "engine/draft_proposer.h"
#include "engine/engine.h"
#include "kv/kv_manager.h"
#include "predict/length_predictor.h"
#include "scheduler/conversations.h"
#include "scheduler/scheduler.h"

namespace seer {

struct EngineStackParts {
  KvConfig kv;
  SchedulerConfig scheduler;
  // The cache the policy keeps (make_conversation_cache decides whether there is one).
  ConversationCacheSetup cache;
  std::unique_ptr<LengthPredictor> predictor;  // null: none
  std::unique_ptr<DraftProposer> drafter;      // null: no speculative decoding
  // Its predictor and drafter are the two above.
  EngineConfig engine;
};

class EngineStack {
 public:
  // `executor` and `clock` must outlive the stack.
  EngineStack(EngineStackParts parts, Executor& executor, Clock& clock);
  EngineStack(const EngineStack&) = delete;
  EngineStack& operator=(const EngineStack&) = delete;

  Engine& engine() { return *engine_; }
  const Engine& engine() const { return *engine_; }
  const KvManager& kv() const { return kv_; }
  const Scheduler& scheduler() const { return *scheduler_; }
  LengthPredictor* predictor() { return predictor_.get(); }
  const LengthPredictor* predictor() const { return predictor_.get(); }
  const DraftProposer* drafter() const { return drafter_.get(); }
  DraftProposer* drafter() { return drafter_.get(); }

 private:
  KvManager kv_;
  std::unique_ptr<Scheduler> scheduler_;  // owns the conversation cache, which points at kv_
  std::unique_ptr<LengthPredictor> predictor_;
  std::unique_ptr<DraftProposer> drafter_;
  std::unique_ptr<Engine> engine_;  // points at all of the above
};

}  // namespace seer
