#include "server/spec_metrics.h"

namespace seer::server {

void publish_spec_metrics(MetricsRegistry& registry, const EngineCounters& c) {
  registry.counter("seer_spec_verify_steps_total", "Sampled chunks that verified speculative draft tokens.")
      .advance_to(static_cast<double>(c.spec_verify_chunks));
  registry.counter("seer_spec_draft_tokens_total", "Speculative draft tokens verified.")
      .advance_to(static_cast<double>(c.spec_draft_tokens));
  registry.counter("seer_spec_accepted_tokens_total", "Speculative draft tokens accepted.")
      .advance_to(static_cast<double>(c.spec_accepted_tokens));
  registry.counter("seer_spec_pauses_total", "Times a request paused drafting because its drafts did not pay.")
      .advance_to(static_cast<double>(c.spec_pauses));
  registry.counter("seer_spec_paused_steps_total", "Request steps run without drafts because drafting was paused.")
      .advance_to(static_cast<double>(c.spec_paused_steps));
  registry.gauge("seer_spec_acceptance_rate", "Accepted / verified draft tokens since start (0 before any).")
      .set(c.spec_draft_tokens > 0 ? static_cast<double>(c.spec_accepted_tokens) / c.spec_draft_tokens : 0.0);
  registry.gauge("seer_spec_tokens_per_step",
                 "Output tokens per chunk that verified drafts: 1 + accepted / verifying chunks (0 before any).")
      .set(c.spec_verify_chunks > 0 ? 1.0 + static_cast<double>(c.spec_accepted_tokens) / c.spec_verify_chunks : 0.0);
}

}  // namespace seer::server
