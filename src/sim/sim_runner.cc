#include "sim/sim_runner.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>
#include <unordered_map>

#include <fmt/format.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/progress.h"
#include "kv/conversation_cache.h"
#include "kv/kv_manager.h"
#include "predict/length_predictor.h"
#include "sim/arrival_feed.h"
#include "engine/prediction_tally.h"
#include "sim/sim_engine.h"

namespace seer {
namespace {

// Collects records and hands finished turns back to the feed.
class Recorder final : public EngineObserver {
 public:
  Recorder(ArrivalFeed& feed, SimResult& result, PredictionTally* tally)
      : feed_(feed), result_(result), tally_(tally) {}
  void track(RequestId id, size_t index) { index_of_[id] = index; }
  void on_finished(const Request& r) override {
    auto it = index_of_.find(r.id);
    if (it == index_of_.end()) return;
    if (r.finish_reason == FinishReason::Length || r.finish_reason == FinishReason::Stop) {
      result_.records.push_back(sim_record_of(r, feed_.entries()[it->second]));
      if (tally_) tally_->add(r);
    }
    feed_.finished(it->second, r.finish_s, r.num_output());
    index_of_.erase(it);
  }
  void on_iteration(const IterationStats& st) override {
    result_.iterations.push_back(
        {st.elapsed_s, st.scheduler_time_s, st.batch_size, st.num_tokens, st.kv_utilization, st.idle});
  }

 private:
  ArrivalFeed& feed_;
  SimResult& result_;
  PredictionTally* tally_;  // null without a predictor
  std::unordered_map<RequestId, size_t> index_of_;
};

}  // namespace

KvConfig sim_kv_config(const SimSetup& s, const CostModel& cost) {
  if (!(s.kv_fraction > 0 && s.kv_fraction <= 1)) fail("--kv-fraction must be in (0, 1], got {}", s.kv_fraction);
  if (s.block_size < 1 || s.block_size > 4096) fail("--block-size must be in [1, 4096], got {}", s.block_size);
  if (!(s.swap_space_gib >= 0)) fail("--swap-space must be >= 0 GiB, got {}", s.swap_space_gib);
  const double usable = static_cast<double>(s.hardware.memory_bytes) * s.kv_fraction;
  const double weights = static_cast<double>(cost.weight_bytes_per_device());
  if (s.kv_memory_bytes > 0 && s.kv_memory_bytes + weights > s.hardware.memory_bytes)
    fail("--kv-memory {:.1f} GiB plus {:.1f} GiB of weights exceed the {:.1f} GiB of {}", s.kv_memory_bytes / 1073741824.0,
         weights / 1073741824.0, s.hardware.memory_bytes / 1073741824.0, s.hardware.name);
  const double kv_bytes = s.kv_memory_bytes > 0 ? static_cast<double>(s.kv_memory_bytes) : usable - weights;
  const double block_bytes_device = double(s.block_size) * cost.kv_bytes_per_token_per_device();
  if (kv_bytes < block_bytes_device)
    fail("{} on {} (tp={}{}) leaves no memory for the KV cache: {:.1f} GiB usable, {:.1f} GiB of weights per device",
         s.model.name, s.hardware.name, s.cost.tp, s.cost.pp > 1 ? fmt::format(", pp={}", s.cost.pp) : "",
         usable / 1073741824.0,
         cost.weight_bytes_per_device() / 1073741824.0);
  KvConfig kv;
  kv.block_size = s.block_size;
  kv.device_blocks = static_cast<int32_t>(std::min(kv_bytes / block_bytes_device, 1e9));
  kv.host_blocks = static_cast<int32_t>(std::min(s.swap_space_gib * 1073741824.0 / block_bytes_device, 1e9));
  kv.bytes_per_block = int64_t{s.block_size} * cost.kv_bytes_per_token();
  return kv;
}

SimResult run_simulation(const SimSetup& setup, const std::vector<TraceEntry>& trace, EngineObserver* observer) {
  const auto wall0 = std::chrono::steady_clock::now();
  CostModel cost(setup.model, setup.hardware, setup.cost);
  SimEngine sim(setup, cost);
  sim.set_slo_trace(trace);
  Engine& engine = sim.engine();
  VirtualClock& clock = sim.clock();
  const KvManager& kv = sim.kv();
  const SchedulerConfig& sched_config = sim.scheduler_config();
  LengthPredictor* predictor = sim.predictor();
  const ConversationCache* cache = sim.cache();

  SimResult result;
  result.device_blocks = kv.usage().device.total;
  if (policy_uses_token_budget(sched_config.policy)) result.token_budget = resolve_token_budget(sched_config);
  ArrivalFeed feed(trace);
  std::optional<PredictionTally> tally;
  if (predictor) tally.emplace(predictor_buckets(setup.predictor, sim.max_model_len()));
  Recorder recorder(feed, result, tally ? &*tally : nullptr);
  engine.add_observer(&recorder);
  if (observer) engine.add_observer(observer);

  ProgressBar bar("sim " + sched_config.policy, static_cast<int64_t>(trace.size()), setup.progress);
  int64_t settled = 0;  // finished or rejected
  int64_t history_tokens = 0, lookup_tokens = 0;  // multi-turn: context re-sent with each turn
  auto admit = [&](const ArrivalFeed::Ready& ready) {
    const TraceEntry& e = feed.entries()[ready.index];
    bool truncated = false;
    std::optional<Request> r = sim.make_request(e, ready, truncated);
    if (!r) {
      ++result.rejected;
      ++settled;
      feed.finished(ready.index, clock.now(), 0);
      return;
    }
    if (truncated) ++result.truncated;
    const int32_t history = ready.prompt_len - std::min(ready.prompt_len, e.prompt_len());
    try {
      recorder.track(engine.add_request(std::move(*r)), ready.index);
      history_tokens += history;
      lookup_tokens += ready.prompt_len;
    } catch (const Error&) {  // needs more KV than the whole pool
      ++result.rejected;
      ++settled;
      feed.finished(ready.index, clock.now(), 0);
    }
  };

  size_t finished_before = 0;
  while (!feed.done() || engine.has_unfinished()) {
    for (const auto& ready : feed.pop_ready(clock.now())) admit(ready);
    if (!engine.has_unfinished()) {
      auto next = feed.next_arrival();
      if (!next) break;  // the rest depends on requests that were rejected
      clock.advance_to(*next);
      continue;
    }
    IterationStats st = engine.step();
    if (st.idle) {
      auto next = feed.next_arrival();
      if (!next)
        fail("simulation stalled at t={:.3f}s: {} requests unfinished but none can be scheduled", clock.now(),
             engine.requests().size());
      clock.advance_to(*next);
    }
    if (result.records.size() != finished_before) {
      settled += static_cast<int64_t>(result.records.size() - finished_before);
      finished_before = result.records.size();
      bar.update(settled, fmt::format("t={:.1f}s", clock.now()));
    }
  }
  bar.finish(fmt::format("t={:.1f}s", clock.now()));

  const EngineCounters& c = engine.counters();
  RunTotals totals{c.preemptions, c.allocation_failures, c.swapped_bytes, c.recomputed_tokens};
  result.summary = summarize(sched_config.policy, result.records, result.iterations, totals);
  if (tally) result.summary.predictions = tally->summary(c.reservation_growths, c.supervisor_preemptions, predictor->stats().retrainings);
  if (engine.config().drafter)
    result.summary.speculation = SpeculationCounts{c.spec_verify_chunks, c.spec_draft_tokens, c.spec_accepted_tokens,
                                                   c.spec_pauses, c.spec_paused_steps};
  result.slo_attainment = slo_attainment(result.records);
  result.slo_attainment_by_class = slo_attainment_by_class(result.records);
  result.summary.slo_attainment = result.slo_attainment;
  if (cache) {
    result.summary.cache = cache->counters();
  } else if (history_tokens > 0) {
    result.summary.cache = stateless_cache_counters(lookup_tokens, history_tokens);
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return result;
}

}  // namespace seer
