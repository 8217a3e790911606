#include "engine/engine_stack.h"

namespace seer {

EngineStack::EngineStack(EngineStackParts parts, Executor& executor, Clock& clock)
    : kv_(parts.kv),
      scheduler_(make_scheduler(parts.scheduler)),
      predictor_(std::move(parts.predictor)),
      drafter_(std::move(parts.drafter)) {
  scheduler_->conversations().attach(
      make_conversation_cache(policy_info(parts.scheduler.policy), kv_, std::move(parts.cache)));
  parts.engine.predictor = predictor_.get();
  parts.engine.drafter = drafter_.get();
  engine_ = std::make_unique<Engine>(*scheduler_, executor, kv_, clock, std::move(parts.engine));
}

}  // namespace seer
