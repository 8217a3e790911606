#include "sim/sim_engine.h"

#include <algorithm>

#include "kv/chunk_cost.h"

namespace seer {
namespace {

// EcoServe's SLO: scale x (t_p + t_g x l_g), t_p the prompt's prefill time alone,
// t_g one decode step at the prompt's context (or their means over the trace), l_g
// the output length.
double slo_deadline(const SimSetup& setup, const CostModel& cost, const Request& r,
                    const std::optional<std::pair<double, double>>& means) {
  const double t_p = means ? means->first : cost.prefill_time(r.prompt_len());
  const double t_g = means ? means->second : cost.decode_time(1, r.prompt_len());
  return setup.slo_scale * (t_p + t_g * r.forced_output_len);
}

// Pensieve's Cost(l): attention of a chunk at context position l, profiled at
// powers of two and interpolated, plus the chunk's share of the linear layers.
ChunkCostFn chunk_cost_from_model(const CostModel& cost, int32_t chunk_tokens, int32_t max_context) {
  auto attention = [&cost, chunk_tokens](int32_t l) {
    IterationShape s;
    s.chunks.push_back({chunk_tokens, l, false});
    return cost.breakdown(s).attention_s;
  };
  IterationShape big;
  big.chunks.push_back({2048, 0, false});
  const double linear = cost.breakdown(big).linear_s / 2048.0 * chunk_tokens;
  std::vector<std::pair<int32_t, double>> points{{0, attention(0) + linear}};
  for (int64_t l = 1; l <= std::max(max_context, 1) * int64_t{2}; l *= 2)
    points.emplace_back(static_cast<int32_t>(l), attention(static_cast<int32_t>(l)) + linear);
  return interpolated_chunk_cost(std::move(points));
}

}  // namespace

RequestRecord sim_record_of(const Request& r, const TraceEntry& e) {
  RequestRecord rec;
  rec.id = r.external_id;
  rec.arrival_s = r.arrival_s;
  rec.first_scheduled_s = r.first_scheduled_s;
  rec.first_token_s = r.first_token_s;
  rec.token_times_s = r.token_times_s;
  rec.finish_s = r.finish_s;
  rec.prompt_tokens = r.prompt_len();
  rec.output_tokens = r.num_output();
  rec.slo = r.slo;
  rec.workload_class = e.workload_class;
  return rec;
}

SimEngine::SimEngine(const SimSetup& setup, const CostModel& cost, SharedKvTier* shared)
    : setup_(setup), cost_(cost), executor_(cost, sim_kv_config(setup, cost).bytes_per_block) {
  EngineStackParts parts;
  parts.kv = sim_kv_config(setup, cost);
  parts.scheduler = setup.scheduler;
  SchedulerConfig& sc = parts.scheduler;
  if (!sc.iteration_time) {
    const int32_t ctx = setup.profile_context;
    const auto kv_tokens = static_cast<int64_t>(setup.profile_kv_fraction * parts.kv.device_blocks * parts.kv.block_size);
    const CostModel* c = &cost_;
    sc.iteration_time = [c, ctx, kv_tokens](int32_t tokens) { return profile_iteration_time(*c, tokens, ctx, kv_tokens); };
  }
  EngineConfig& ec = parts.engine;
  ec.max_model_len = setup.max_model_len > 0 ? setup.max_model_len : setup.model.max_context;
  ec.check_invariants = setup.check_invariants;
  parts.predictor = make_predictor_from_flags(setup.predictor, ec.max_model_len);
  ConversationCacheSetup& cs = parts.cache;
  cs.chunk_tokens = setup.chunk_tokens;
  cs.swap_out_threshold = setup.swap_out_threshold;
  cs.eviction = setup.eviction;
  if (policy_info(sc.policy).caches_conversations)
    cs.chunk_cost = chunk_cost_from_model(cost, setup.chunk_tokens, ec.max_model_len);
  cs.shared = shared;
  cs.shared_write_through = setup.shared_write_through;
  if (setup.speculate_acceptance >= 0) {
    executor_.model_speculation(setup.speculate_acceptance, setup.speculate_seed);
    parts.drafter = std::make_unique<FixedDraftProposer>(setup.draft_tokens, 0, setup.draft_cost_s);
    ec.speculation_gate.enabled = setup.speculate_gate;
  }
  sched_config_ = sc;
  stack_ = std::make_unique<EngineStack>(std::move(parts), executor_, clock_);
}

std::optional<Request> SimEngine::make_request(const TraceEntry& e, const ArrivalFeed::Ready& ready,
                                               bool& truncated) const {
  const int32_t max_len = max_model_len();
  int32_t max_tokens = setup_.max_tokens > 0 ? setup_.max_tokens : max_len - ready.prompt_len;
  max_tokens = std::min(max_tokens, max_len - ready.prompt_len);
  truncated = false;
  if (max_tokens < 1) return std::nullopt;
  Request r;
  r.external_id = e.id;
  r.arrival_s = ready.arrival_s;
  r.prompt_tokens.assign(static_cast<size_t>(std::max(ready.prompt_len, 1)), 0);
  r.sampling.temperature = 0;
  r.sampling.ignore_eos = true;
  r.sampling.max_tokens = max_tokens;
  r.forced_output_len = std::min(e.output_tokens, max_tokens);
  truncated = e.output_tokens > max_tokens;
  r.conversation = e.conversation;
  r.conversation_history_len = ready.prompt_len - std::min(ready.prompt_len, e.prompt_len());  // earlier turns
  r.prompt_text = e.prompt;  // what a length predictor reads
  r.turn = e.turn;
  r.slo = e.slo;
  if (r.slo.deadline_s <= 0 && setup_.slo_scale > 0) r.slo.deadline_s = slo_deadline(setup_, cost_, r, slo_means_);
  r.priority = e.priority;
  return r;
}

void SimEngine::set_slo_trace(const std::vector<TraceEntry>& trace) {
  if (!setup_.slo_from_trace_means || trace.empty()) return;
  double t_p = 0, t_g = 0;
  for (const TraceEntry& e : trace) {
    const int32_t prompt = std::max(e.prompt_len(), 1);
    t_p += cost_.prefill_time(prompt);
    t_g += cost_.decode_time(1, prompt);
  }
  const auto n = static_cast<double>(trace.size());
  slo_means_ = std::make_pair(t_p / n, t_g / n);
}

}  // namespace seer
