#pragma once
// Speculative-decoding series of /metrics (docs/speculative.md):
//   seer_spec_verify_steps_total     sampled chunks that verified draft tokens
//   seer_spec_draft_tokens_total     draft tokens verified
//   seer_spec_accepted_tokens_total  draft tokens accepted (output tokens a step saved)
//   seer_spec_pauses_total           requests paused drafting (their drafts did not pay)
//   seer_spec_paused_steps_total     request steps run without drafts while paused
//   seer_spec_acceptance_rate        accepted / drafted, since start
//   seer_spec_tokens_per_step        output tokens per verifying chunk: 1 + accepted / steps
#include "engine/engine.h"
#include "server/prometheus.h"

namespace seer::server {

// Publishes the current values (engine thread, after each step).
void publish_spec_metrics(MetricsRegistry& registry, const EngineCounters& c);

}  // namespace seer::server
