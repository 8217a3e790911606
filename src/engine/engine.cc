#include "engine/engine.h"

#include <algorithm>
#include <chrono>
#include <stdexcept>

#include <fmt/format.h>

#include "common/error.h"
#include "engine/draft_proposer.h"
#include "kv/kv_manager.h"
#include "predict/length_predictor.h"
#include "scheduler/scheduler.h"

namespace seer {

Engine::Engine(Scheduler& scheduler, Executor& executor, KvManager& kv, Clock& clock, EngineConfig config)
    : scheduler_(scheduler),
      executor_(executor),
      kv_(kv),
      clock_(clock),
      config_(std::move(config)),
      gate_(config_.speculation_gate) {
  if (config_.max_model_len <= 0) fail("engine: max_model_len must be > 0 (got {})", config_.max_model_len);
  if (executor_.simulated()) {
    virtual_clock_ = dynamic_cast<VirtualClock*>(&clock_);
    if (!virtual_clock_) fail("engine: a simulated executor needs a VirtualClock");
  }
}

Engine::~Engine() = default;

int32_t max_request_tokens(int32_t max_model_len, int64_t pool_tokens) {
  return static_cast<int32_t>(std::min<int64_t>(max_model_len, pool_tokens));
}

int32_t Engine::max_request_tokens() const {
  return seer::max_request_tokens(config_.max_model_len, kv_.config().tokens_for(kv_.usage().device.total));
}

namespace {
std::string label(const Request& r) {
  return r.external_id.empty() ? std::string("request") : fmt::format("request '{}'", r.external_id);
}
}  // namespace

RequestId Engine::add_request(Request r) {
  const std::string who = label(r);
  if (r.prompt_tokens.empty()) fail("{}: the prompt is empty", who);
  scheduler_.conversations().arrive(r, clock_.now());
  if (r.max_tokens_fill_context) r.sampling.max_tokens = std::max(max_request_tokens() - r.prompt_len(), 1);
  if (!r.output_tokens.empty()) fail("{}: output_tokens must be empty for a new request", who);
  try {
    r.sampling.validate();
  } catch (const Error& e) {
    fail("{}: {}", who, e.what());
  }
  const int32_t max_tokens = r.sampling.max_tokens;
  if (max_tokens <= 0) fail("{}: max_tokens must be > 0 (got {})", who, max_tokens);
  if (config_.vocab_size > 0) {
    for (size_t i = 0; i < r.prompt_tokens.size(); ++i)
      if (r.prompt_tokens[i] < 0 || r.prompt_tokens[i] >= config_.vocab_size)
        fail("{}: prompt token {} at index {} is outside the vocabulary [0, {})", who, r.prompt_tokens[i], i,
             config_.vocab_size);
  }
  const int64_t total = static_cast<int64_t>(r.prompt_len()) + max_tokens;
  const int32_t limit = max_request_tokens();
  if (total > limit)
    fail_with_code("context_length_exceeded",
                   "{}: prompt ({} tokens) + max_tokens ({}) = {} exceeds the context length of {} tokens{}", who,
         r.prompt_len(), max_tokens, total, limit,
         limit < config_.max_model_len ? " (all the device KV pool holds)" : "");
  if (r.forced_output_len >= 0 && (r.forced_output_len < 1 || r.forced_output_len > max_tokens))
    fail("{}: forced output length {} must be in [1, max_tokens = {}]", who, r.forced_output_len, max_tokens);
  if (r.predicted_output_len && *r.predicted_output_len < 0)
    fail("{}: predicted output length must be >= 0 (got {})", who, *r.predicted_output_len);

  r.id = next_id_++;
  if (r.arrival_s < 0) r.arrival_s = clock_.now();
  if (config_.predictor && !r.predicted_output_len) {
    const LengthPrediction p = config_.predictor->predict(
        LengthQuery{.id = r.id, .name = r.external_id, .prompt_text = r.prompt_text, .true_output_len = r.forced_output_len});
    r.predicted_output_len = p.tokens;
    r.predicted_bucket = p.bucket;
  }
  static_cast<RequestProgress&>(r) = RequestProgress{};
  Request& stored = requests_.add(std::move(r));
  propose_drafts(stored);
  scheduler_.add(stored);
  return stored.id;
}

bool Engine::abort_request(RequestId id) {
  Request* r = requests_.find(id);
  if (!r || r->finished()) return false;
  if (in_step_) {
    r->finish_reason = FinishReason::Abort;
    to_finish_.push_back(id);
    return true;
  }
  finish(*r, FinishReason::Abort);
  return true;
}

Conversations& Engine::conversations() { return scheduler_.conversations(); }

bool Engine::delete_conversation(const std::string& conversation) {
  if (!scheduler_.conversations().cache() || conversation.empty()) return false;
  bool forgotten = scheduler_.conversations().forget(conversation, clock_.now());
  // A live turn took the entry with it (or will write it at finish): mark it.
  for (const auto& [id, r] : requests_) {
    if (r->conversation != conversation || r->finished() || r->conversation_deleted) continue;
    r->conversation_deleted = true;
    forgotten = true;
  }
  return forgotten;
}

bool Engine::has_unfinished() const { return requests_.size() > 0; }
size_t Engine::num_running() const { return scheduler_.num_running(); }
size_t Engine::num_waiting() const {
  return scheduler_.num_waiting() + scheduler_.num_swapped() + scheduler_.num_held();
}
size_t Engine::num_swapped() const { return scheduler_.num_swapped(); }

void Engine::finish(Request& r, FinishReason reason) {
  scheduler_.remove(r.id);
  feed_.forget(r.id);
  if (config_.drafter) config_.drafter->forget(r.id);
  scheduler_.conversations().release(r, kv_, clock_.now());
  r.state = RequestState::Finished;
  r.finish_reason = reason;
  r.finish_s = clock_.now();
  ++counters_.finished_requests;
  if (config_.predictor && (reason == FinishReason::Stop || reason == FinishReason::Length))
    config_.predictor->observe(LengthOutcome{.id = r.id, .prompt_text = r.prompt_text, .output_len = r.num_output()});
  for (EngineObserver* o : observers_) o->on_finished(r);
  requests_.erase(r.id);
}

IterationStats Engine::step() {
  IterationStats st;
  st.start_s = clock_.now();
  in_step_ = true;
  try {
    run_iteration(st);
  } catch (...) {
    in_step_ = false;
    throw;
  }
  in_step_ = false;
  finish_pending();
  if (!st.idle)
    for (EngineObserver* o : observers_) o->on_iteration(st);
  if (config_.check_invariants) {
    kv_.check_invariants();
    scheduler_.check_invariants(requests_, kv_);
  }
  return st;
}

void Engine::run_iteration(IterationStats& st) {
  SchedulerContext ctx{requests_, kv_, st.start_s};
  // The one wall-clock read below the frontend: scheduler overhead is a metric in
  // simulation too.
  auto t0 = std::chrono::steady_clock::now();
  StepPlan plan = scheduler_.schedule(ctx);
  auto t1 = std::chrono::steady_clock::now();
  st.scheduler_time_s = std::chrono::duration<double>(t1 - t0).count();

  counters_.reservation_growths += plan.reservation_growths;
  for (const Preemption& p : plan.preemptions) {
    ++st.preemptions;
    if (config_.drafter) config_.drafter->forget(p.request);  // its draft K/V is rebuilt on resumption
    if (p.outgrew_reservation) ++counters_.supervisor_preemptions;
    if (p.mode == PreemptionMode::Swap) {
      ++counters_.preemptions_swap;
    } else if (p.mode == PreemptionMode::Held) {
      ++counters_.preemptions_held;
    } else {
      ++counters_.preemptions_recompute;
      st.recomputed_tokens += p.lost_tokens;
    }
  }
  for (const KvOp& op : plan.kv_ops)
    if (op.kind != KvOpKind::Copy) st.swapped_bytes += kv_.config().bytes_per_block;
  st.allocation_failures = plan.allocation_failures;
  counters_.preemptions += st.preemptions;
  counters_.recomputed_tokens += st.recomputed_tokens;
  counters_.swapped_bytes += st.swapped_bytes;
  counters_.allocation_failures += st.allocation_failures;
  st.kv_utilization = kv_.usage().utilization();
  st.kv_bytes = int64_t{kv_.usage().device.used()} * kv_.config().bytes_per_block;

  if (plan.empty()) {
    st.idle = true;
  } else {
    if (executor_.needs_request_data()) feed_.fill(plan, requests_, kv_);
    for (EngineObserver* o : observers_) o->on_plan(plan);
    for (size_t i = 0; i < plan.chunks.size(); ++i) {
      const ScheduledChunk& c = plan.chunks[i];
      Request& r = requests_.get(c.request);
      if (r.first_scheduled_s < 0) r.first_scheduled_s = st.start_s;
      if (i == 0 || plan.chunks[i - 1].request != c.request) ++st.batch_size;
    }
    st.num_tokens = plan.num_tokens();
    StepResult result = executor_.execute(plan);
    scheduler_.conversations().plan_executed();
    if (virtual_clock_) virtual_clock_->advance(result.elapsed_s);
    st.elapsed_s = result.elapsed_s;
    ++counters_.iterations;
    if (config_.drafter) observe_step_cost(plan, result.elapsed_s);
    commit(plan, result, st);
  }
}

void Engine::observe_step_cost(const StepPlan& plan, double seconds) {
  if (!plan.kv_ops.empty()) return;  // swaps and copies are not the model's cost
  int32_t decodes = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    if (!c.sample || c.num_tokens - c.num_draft != 1) return;  // a prompt chunk
    ++decodes;
  }
  gate_.observe_decode_step(decodes, plan.num_tokens(), seconds);
}

void Engine::commit(const StepPlan& plan, const StepResult& result, IterationStats& st) {
  size_t next_sample = 0;
  for (const ScheduledChunk& c : plan.chunks) {
    Request& r = requests_.get(c.request);
    r.num_computed_tokens = std::max(r.num_computed_tokens, c.sequence_end());
    if (c.start < r.num_dropped_leading) r.num_dropped_leading = 0;  // the recomputed leading range
    // Sliding-window blocks behind every window go (kv_manager.h); a pending recomputation
    // of the leading range still needs its own.
    kv_.trim(r.id, r.num_dropped_leading > 0 ? 0 : r.num_computed_tokens);
    if (!c.sample) continue;
    if (next_sample >= result.sampled.size() || result.sampled[next_sample].request != c.request)
      throw std::logic_error(fmt::format("executor returned no sampled token for request {} (chunk {}+{})",
                                         c.request, c.start, c.num_tokens));
    // The chunk's accepted drafts, then the token sampled after them.
    size_t n = 1;
    while (n <= static_cast<size_t>(c.num_draft) && next_sample + n < result.sampled.size() &&
           result.sampled[next_sample + n].request == c.request)
      ++n;
    const auto accepted = static_cast<int32_t>(n - 1);
    if (c.num_draft > 0) {
      ++counters_.spec_verify_chunks;
      counters_.spec_draft_tokens += c.num_draft;
      counters_.spec_accepted_tokens += accepted;
      feed_.accepted(r.id, accepted);
      r.draft_limit = accepted + 1;
      const bool was_paused = r.speculation.paused_steps > 0;
      gate_.verified(r.speculation, c.num_draft, accepted);
      if (!was_paused && r.speculation.paused_steps > 0) ++counters_.spec_pauses;
    }
    for (size_t i = 0; i < n; ++i) {
      if (r.finish_reason != FinishReason::None) break;  // finished by an earlier token, or aborted by an observer
      append_token(r, result.sampled[next_sample + i]);
      if (i + 1 < n) ++r.num_computed_tokens;  // an accepted draft: its K/V are valid
    }
    next_sample += n;
    if (c.num_draft > 0) kv_.truncate(r.id, r.num_tokens());  // the rejected drafts' K/V
    if (r.finish_reason != FinishReason::None && r.finish_reason != FinishReason::Abort) to_finish_.push_back(r.id);
    if (r.finish_reason == FinishReason::None) propose_drafts(r);
  }
  if (next_sample != result.sampled.size())
    throw std::logic_error(fmt::format("executor returned {} sampled tokens for {} sampled chunks",
                                       result.sampled.size(), next_sample));
}

void Engine::finish_pending() {
  std::vector<RequestId> ids;
  ids.swap(to_finish_);
  for (RequestId id : ids) {
    Request* r = requests_.find(id);
    if (r && !r->finished()) finish(*r, r->finish_reason);
  }
}

void Engine::propose_drafts(Request& r) {
  r.draft_tokens.clear();
  if (!config_.drafter) return;
  gate_.set_draft_cost(config_.drafter->seconds_per_draft());
  if (!gate_.may_draft(r.speculation)) {
    ++counters_.spec_paused_steps;
    return;
  }
  // Each verified draft is one output the request may still produce, besides the
  // token sampled after the drafts; the sequence stays within the context.
  const int32_t max_output = r.forced_output_len >= 0 ? r.forced_output_len : r.sampling.max_tokens;
  int32_t limit = std::min(max_output - r.num_output(), config_.max_model_len - r.num_tokens()) - 1;
  if (r.draft_limit > 0) limit = std::min(limit, r.draft_limit);
  if (limit <= 0) return;
  r.draft_tokens = config_.drafter->propose(r.id, r.prompt_tokens, r.output_tokens, limit);
  // A simulated drafter's modelled time (a real one's passes on the wall clock).
  if (virtual_clock_) virtual_clock_->advance(config_.drafter->seconds_per_draft() * r.draft_tokens.size());
}

void Engine::append_token(Request& r, const SampledToken& s) {
  r.output_tokens.push_back(s.token);
  if (r.sampling.logprobs) r.output_logprobs.push_back(s.logprob);
  const double now = clock_.now();
  r.token_times_s.push_back(now);
  if (r.first_token_s < 0) {
    r.first_token_s = now;
    counters_.prompt_tokens += r.prompt_len();
  }
  r.last_token_s = now;
  ++counters_.generation_tokens;

  bool stop = false;
  for (EngineObserver* o : observers_) stop = o->on_token(r, s) || stop;
  if (r.finish_reason == FinishReason::Abort) return;  // an observer aborted it
  FinishReason reason = FinishReason::None;
  if (stop) {
    reason = FinishReason::Stop;
  } else if (r.forced_output_len >= 0) {
    // Benchmarks force the trace's length: EOS is ignored.
    if (r.num_output() >= r.forced_output_len) reason = FinishReason::Length;
  } else if (!r.sampling.ignore_eos &&
             std::find(config_.eos_ids.begin(), config_.eos_ids.end(), s.token) != config_.eos_ids.end()) {
    reason = FinishReason::Stop;
  } else if (r.num_output() >= r.sampling.max_tokens || r.num_tokens() >= config_.max_model_len) {
    reason = FinishReason::Length;
  }
  r.finish_reason = reason;  // finish() runs after the whole batch is committed
}

}  // namespace seer
