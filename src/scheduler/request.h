#pragma once
// A request as the scheduler and engine see it. Prefill, chunked prefill, decode and
// recomputation are not phases: a request simply has num_tokens() tokens of which
// num_computed_tokens have K/V in the cache (docs/architecture.md §1.3).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/kv_types.h"
#include "sampling/sampling_params.h"

namespace seer {

// Held: paused with its device KV kept (EcoServe's offload-free preemption; a
// generation task waiting for its group to be admitted).
enum class RequestState { Waiting, Running, Swapped, Finished, Held };
enum class FinishReason { None, Stop, Length, Abort, Error };
const char* finish_reason_name(FinishReason r);  // "stop", "length", "abort", "error"

struct Slo {
  double ttft_s = 0;      // 0: none
  double tbt_s = 0;
  double deadline_s = 0;  // end-to-end, relative to arrival
};

// What the scheduler remembers about a request across preemptions.
struct SchedulingState {
  // Re-admission reserves at least this many tokens of KV (S3's supervisor sets it
  // to the doubled reservation of a request it preempted; 0: no floor).
  int32_t min_reservation_tokens = 0;
  int32_t reservation_growths = 0;     // times the supervisor doubled the reservation
  int32_t supervisor_preemptions = 0;  // times it preempted the request instead
  bool cache_lookup_counted = false;   // the conversation cache counted its admission
  // EcoServe: admitted as a generation task (its prefill done and its output
  // reserved) at least once since it last started from scratch.
  bool generation_task = false;
};

// A request is split by concern (docs/architecture.md §2). The first three parts are
// what a caller (the HTTP front end, a trace replay, a test) gives; the engine
// completes them at arrival (history, max_tokens, prediction). RequestProgress is
// the engine's and the scheduler's alone: Engine::add_request starts it afresh, so
// nothing a caller leaves in it survives, and there is no list of fields to reset.

// What to run.
struct RequestSpec {
  std::string external_id;  // trace "id" or the HTTP response id
  double arrival_s = 0;     // < 0: "now" (the engine's clock at add_request)
  // Token sequence = prompt followed by output. In simulation the ids are placeholders
  // but the lengths are real.
  std::vector<int32_t> prompt_tokens;
  // The prompt as text when the frontend or trace has it (length predictors read
  // it); may be empty.
  std::string prompt_text;
  SamplingParams sampling;  // includes max_tokens, stop strings, ignore_eos
  // True output length from a trace. The scheduler never reads it; only the oracle
  // predictor and the engine's forced-length stop rule do.
  int32_t forced_output_len = -1;
};

// What the scheduler plans it by: service targets and the predicted output length.
struct RequestTargets {
  Slo slo;
  int32_t priority = 0;  // higher first when a policy honours priority
  // Output-length prediction (S3, EcoServe). Set by the engine's LengthPredictor
  // (predict/length_predictor.h) before the scheduler first sees the request,
  // unless the caller set it.
  std::optional<int32_t> predicted_output_len;
  int32_t predicted_bucket = -1;  // the predictor's length bucket (-1: none, or set by the caller)
};

// Stateful multi-turn serving (Pensieve, docs/pensieve.md). `conversation` is the
// tier key of kv/conversation_key.h ("TENANT/ID" when served); cached KV is only
// ever shared within `tenant` (docs/security.md).
struct ConversationTurn {
  std::string tenant;
  std::string conversation;
  int32_t turn = 0;
  // The prompt holds only the new message: the scheduler's arrival hook prepends
  // the conversation's history (minus this prompt's first `fresh_start_tokens`
  // tokens, e.g. BOS, when a history exists).
  bool continues_conversation = false;
  int32_t fresh_start_tokens = 0;
  // max_tokens was not given: the engine sets it to the context left after the
  // history it prepends (sampling.max_tokens until then: the new message's share).
  bool max_tokens_fill_context = false;
  // Leading prompt tokens that came from the conversation's history (prepended at
  // arrival, given by a caller whose prompt already holds it, as the simulator
  // replaying a trace, or found in the cache); what an aborted turn hands back.
  int32_t conversation_history_len = 0;
};

// Everything the engine and the scheduler change while the request lives.
struct RequestProgress {
  std::vector<int32_t> output_tokens;  // the sequence is prompt_tokens then these
  std::vector<float> output_logprobs;  // filled when sampling.logprobs
  // Prompt tokens whose K/V the prefix / conversation cache supplied at the first
  // admission (device or host tier; usage.prompt_tokens_details.cached_tokens).
  int32_t cached_prompt_tokens = 0;

  // KV: tokens whose K/V are in the cache (device tier) and valid, of which the
  // leading num_dropped_leading were dropped and must be recomputed (Pensieve);
  // total tokens of KV reserved for it (S3, EcoServe); what the scheduler
  // remembers across preemptions.
  int32_t num_computed_tokens = 0;
  int32_t num_dropped_leading = 0;
  int32_t reserved_tokens = 0;
  SchedulingState scheduling;

  // Speculative decoding (docs/speculative.md): tokens the engine's draft proposer
  // guesses follow the sequence. The scheduler may verify a prefix of them in the
  // request's sampled chunk (ScheduledChunk::num_draft); never part of the sequence.
  std::vector<int32_t> draft_tokens;
  // Drafts to propose next at most (0: the proposer's maximum): one more than the
  // last verification accepted, so a request whose drafts fail stops paying for many.
  int32_t draft_limit = 0;
  // Whether drafting pays for this request (engine/speculation_gate.h): its
  // acceptance over the current window, and its pause when it did not pay.
  struct SpeculationWindow {
    int32_t drafted = 0;
    int32_t accepted = 0;
    int32_t verifications = 0;
    int32_t paused_steps = 0;  // its own steps left without drafts
    int32_t backoff = 0;       // the next pause (0: the gate's first)
  } speculation;

  RequestState state = RequestState::Waiting;
  FinishReason finish_reason = FinishReason::None;
  std::string error;  // set with FinishReason::Error
  // The conversation was deleted while this turn was live: its KV is freed when it
  // finishes instead of becoming the conversation's entry again.
  bool conversation_deleted = false;

  // Timing (clock seconds) for metrics.
  double first_scheduled_s = -1;
  double first_token_s = -1;
  double last_token_s = -1;
  double finish_s = -1;
  std::vector<double> token_times_s;  // time each output token was produced
  int32_t preemptions = 0;
};

struct Request : RequestSpec, RequestTargets, ConversationTurn, RequestProgress {
  RequestId id = -1;  // dense engine-internal id, assigned by Engine::add_request

  int32_t prompt_len() const { return static_cast<int32_t>(prompt_tokens.size()); }
  int32_t num_tokens() const { return static_cast<int32_t>(prompt_tokens.size() + output_tokens.size()); }
  int32_t num_output() const { return static_cast<int32_t>(output_tokens.size()); }
  int32_t token_at(int32_t pos) const {
    return pos < prompt_len() ? prompt_tokens[pos] : output_tokens[pos - prompt_len()];
  }
  bool finished() const { return state == RequestState::Finished; }
  bool prefill_done() const { return num_computed_tokens >= prompt_len(); }
};

}  // namespace seer
