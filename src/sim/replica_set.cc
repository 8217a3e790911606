#include "sim/replica_set.h"

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <memory>
#include <unordered_map>

#include <fmt/format.h>

#include "common/error.h"
#include "common/progress.h"
#include "engine/prediction_tally.h"
#include "sim/arrival_feed.h"
#include "sim/routing/router.h"
#include "sim/sim_engine.h"

namespace seer {
namespace {

constexpr double kNever = std::numeric_limits<double>::infinity();

// Hands a replica's finished requests back to the loop.
class ReplicaObserver final : public EngineObserver {
 public:
  explicit ReplicaObserver(std::function<void(const Request&)> done) : done_(std::move(done)) {}
  void on_finished(const Request& r) override { done_(r); }
  void on_iteration(const IterationStats& st) override {
    iterations.push_back({st.elapsed_s, st.scheduler_time_s, st.batch_size, st.num_tokens, st.kv_utilization, st.idle});
  }
  std::vector<IterationRecord> iterations;

 private:
  std::function<void(const Request&)> done_;
};

struct Replica {
  std::unique_ptr<SimEngine> sim;
  std::unique_ptr<ReplicaObserver> observer;
  ReplicaLoad load;
  ReplicaReport report;
  bool stalled = false;  // stepped idle: waits for a delivery
  std::unordered_map<RequestId, size_t> routed_id;  // engine id -> router id
};

struct Delivery {
  size_t router_id = 0;
  Request request;
};

class ReplicaSetLoop {
 public:
  ReplicaSetLoop(const SimSetup& setup, const ReplicaSetOptions& o, const std::vector<TraceEntry>& trace,
                 const std::function<EngineObserver*(size_t)>& extra)
      : setup_(setup), options_(o), cost_(setup.model, setup.hardware, setup.cost), feed_(trace),
        router_(make_router(o.routing)) {
    if (o.replicas < 1 || o.replicas > 4096) fail("--replicas must be in [1, 4096], got {}", o.replicas);
    if (o.fail_replica >= o.replicas)
      fail("--fail-replica: replica {} does not exist (replicas 0..{})", o.fail_replica, o.replicas - 1);
    if (o.fail_replica >= 0 && !(o.fail_at_s >= 0)) fail("--fail-replica: the time must be >= 0 s, got {}", o.fail_at_s);
    if (o.shared_tier && !policy_info(setup.scheduler.policy).caches_conversations)
      fail("--shared-tier needs a policy with a conversation cache (pensieve, pensieve-gpu), not '{}'",
           setup.scheduler.policy);
    if (o.shared_tier) shared_.emplace(cost_.kv_bytes_per_token(), setup.chunk_tokens, o.shared_limits);
    for (int32_t i = 0; i < o.replicas; ++i) {
      auto& r = replicas_.emplace_back(std::make_unique<Replica>());
      r->sim = std::make_unique<SimEngine>(setup, cost_, shared_ ? &*shared_ : nullptr);
      r->sim->set_slo_trace(trace);
      r->observer = std::make_unique<ReplicaObserver>([this, i](const Request& req) { finished(i, req); });
      r->sim->engine().add_observer(r->observer.get());
      if (extra)
        if (EngineObserver* e = extra(static_cast<size_t>(i))) r->sim->engine().add_observer(e);
    }
    fail_pending_ = o.fail_replica >= 0;
    if (replicas_.front()->sim->predictor())
      tally_.emplace(predictor_buckets(setup.predictor, replicas_.front()->sim->max_model_len()));
  }

  ReplicaSetResult run();

 private:
  double next_step_time(size_t& which) const {
    double t = kNever;
    for (size_t i = 0; i < replicas_.size(); ++i) {
      const Replica& r = *replicas_[i];
      if (!r.load.alive || r.stalled || !r.sim->engine().has_unfinished()) continue;
      if (r.sim->engine().clock().now() < t) t = r.sim->engine().clock().now(), which = i;
    }
    return t;
  }
  std::vector<ReplicaLoad> loads() const {
    std::vector<ReplicaLoad> out;
    for (const auto& r : replicas_) out.push_back(r->load);
    return out;
  }
  void route(const ArrivalFeed::Ready& ready, double now);
  void deliver(size_t router_id, Request r, double now);
  void settle(size_t router_id, RequestOutcome outcome, double now, int32_t output_tokens);
  void finished(size_t replica, const Request& r);
  void kill(size_t replica, double now);
  ReplicaSetResult finish_result(std::chrono::steady_clock::time_point wall0);

  const SimSetup& setup_;
  const ReplicaSetOptions& options_;
  CostModel cost_;
  ArrivalFeed feed_;
  std::unique_ptr<Router> router_;
  std::optional<SharedKvTier> shared_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::multimap<std::pair<double, size_t>, Delivery> deliveries_;  // (time, router id)
  bool fail_pending_ = false;
  ReplicaSetResult result_;
  std::optional<PredictionTally> tally_;  // S3's accuracy figures, with a predictor
  int64_t settled_ = 0, history_tokens_ = 0, lookup_tokens_ = 0;
};

void ReplicaSetLoop::route(const ArrivalFeed::Ready& ready, double now) {
  const TraceEntry& e = feed_.entries()[ready.index];
  const size_t id = result_.routed.size();
  result_.routed.push_back({ready.index, -1, RequestOutcome::Pending, 0});
  const std::vector<ReplicaLoad> view = loads();
  const size_t target = router_->route({e.conversation, ready.prompt_len}, view);
  Replica& rep = *replicas_[target];
  result_.routed[id].replica = static_cast<int32_t>(target);
  ++rep.report.routed;
  bool truncated = false;
  std::optional<Request> r = rep.sim->make_request(e, ready, truncated);
  if (!r) {
    settle(id, RequestOutcome::Rejected, std::max(now, rep.sim->engine().clock().now()), 0);
    return;
  }
  if (truncated) ++result_.sim.truncated;
  ++rep.load.outstanding_requests;
  rep.load.outstanding_tokens += r->prompt_len();
  double fetch_s = 0;
  if (shared_ && !e.conversation.empty()) {
    shared_->expire(now);
    const int32_t tokens = rep.sim->engine().conversations().shared_restorable(*r);
    if (tokens > 0) fetch_s = options_.shared_tier->fetch_time(int64_t{tokens} * cost_.kv_bytes_per_token());
    if (fetch_s > 0 && options_.fetch_only_if_faster && fetch_s >= cost_.prefill_time(tokens)) {
      fetch_s = 0;
      result_.routed[id].fetch_declined = true;
      ++result_.fetches_declined;
    }
  }
  result_.shared_fetch_s += fetch_s;
  if (fetch_s > 0)
    deliveries_.emplace(std::pair{now + fetch_s, id}, Delivery{id, std::move(*r)});
  else
    deliver(id, std::move(*r), now);
}

void ReplicaSetLoop::deliver(size_t router_id, Request r, double now) {
  RoutedRequest& routed = result_.routed[router_id];
  Replica& rep = *replicas_[static_cast<size_t>(routed.replica)];
  Engine& engine = rep.sim->engine();
  if (!engine.has_unfinished() || rep.stalled) rep.sim->clock().advance_to(now);
  rep.stalled = false;
  if (shared_ && !routed.fetch_declined)
    routed.shared_fetch_tokens = engine.conversations().restore_shared(r, {}, rep.sim->clock().now());
  const int32_t prompt = r.prompt_len();
  const int32_t own = feed_.entries()[routed.trace_index].prompt_len();
  try {
    const RequestId id = engine.add_request(std::move(r));
    rep.routed_id[id] = router_id;
    lookup_tokens_ += prompt;
    history_tokens_ += prompt - std::min(prompt, own);
  } catch (const Error&) {  // needs more KV than the whole pool
    --rep.load.outstanding_requests;
    rep.load.outstanding_tokens -= prompt;
    settle(router_id, RequestOutcome::Rejected, rep.sim->clock().now(), 0);
  }
}

void ReplicaSetLoop::settle(size_t router_id, RequestOutcome outcome, double now, int32_t output_tokens) {
  RoutedRequest& routed = result_.routed[router_id];
  if (routed.outcome != RequestOutcome::Pending)
    throw std::logic_error(fmt::format("replica set: request {} settled twice", router_id));
  routed.outcome = outcome;
  ReplicaReport& report = replicas_[static_cast<size_t>(routed.replica)]->report;
  switch (outcome) {
    case RequestOutcome::Finished: ++report.finished; break;
    case RequestOutcome::Rejected: ++report.rejected, ++result_.sim.rejected; break;
    case RequestOutcome::Failed: ++report.failed, ++result_.failed; break;
    case RequestOutcome::Pending: break;
  }
  ++settled_;
  feed_.finished(routed.trace_index, now, output_tokens);  // releases the conversation's next turn
}

void ReplicaSetLoop::finished(size_t replica, const Request& r) {
  Replica& rep = *replicas_[replica];
  auto it = rep.routed_id.find(r.id);
  if (it == rep.routed_id.end()) return;
  const size_t router_id = it->second;
  rep.routed_id.erase(it);
  --rep.load.outstanding_requests;
  rep.load.outstanding_tokens -= r.prompt_len();
  const bool completed = r.finish_reason == FinishReason::Length || r.finish_reason == FinishReason::Stop;
  if (completed) {
    result_.sim.records.push_back(sim_record_of(r, feed_.entries()[result_.routed[router_id].trace_index]));
    if (tally_) tally_->add(r);
  }
  settle(router_id, completed ? RequestOutcome::Finished : RequestOutcome::Failed, r.finish_s,
         completed ? r.num_output() : 0);
}

// The replica's in-flight requests and the deliveries on their way to it fail;
// the router sends its conversations' next turns elsewhere.
void ReplicaSetLoop::kill(size_t replica, double now) {
  Replica& rep = *replicas_[replica];
  rep.load.alive = false;
  rep.report.alive = false;
  std::vector<size_t> lost;
  for (const auto& [engine_id, router_id] : rep.routed_id) lost.push_back(router_id);
  rep.routed_id.clear();
  for (auto it = deliveries_.begin(); it != deliveries_.end();) {
    if (result_.routed[it->second.router_id].replica == static_cast<int32_t>(replica)) {
      lost.push_back(it->second.router_id);
      it = deliveries_.erase(it);
    } else {
      ++it;
    }
  }
  std::sort(lost.begin(), lost.end());
  for (size_t id : lost) settle(id, RequestOutcome::Failed, now, 0);
  rep.load.outstanding_requests = rep.load.outstanding_tokens = 0;
  bool any = false;
  for (const auto& r : replicas_) any = any || r->load.alive;
  if (!any) fail("--fail-replica: the only live replica died; nothing can serve the rest of the trace");
}

ReplicaSetResult ReplicaSetLoop::run() {
  const auto wall0 = std::chrono::steady_clock::now();
  ProgressBar bar(replicas_.size() == 1 ? "sim " + setup_.scheduler.policy
                                        : fmt::format("sim {} x{} {}", setup_.scheduler.policy, replicas_.size(),
                                                      options_.routing),
                  static_cast<int64_t>(feed_.entries().size()), setup_.progress);
  int64_t shown = 0;
  double now = 0;
  while (true) {
    size_t stepper = 0;
    const double t_step = next_step_time(stepper);
    const double t_arrival = feed_.next_arrival().value_or(kNever);
    const double t_delivery = deliveries_.empty() ? kNever : deliveries_.begin()->first.first;
    const double t_fail = fail_pending_ ? options_.fail_at_s : kNever;
    const double t = std::min({t_step, t_arrival, t_delivery, t_fail});
    if (t == kNever) break;
    now = std::max(now, t);
    if (t_fail == t) {
      fail_pending_ = false;
      kill(static_cast<size_t>(options_.fail_replica), t);
    } else if (t_arrival == t) {
      for (const auto& ready : feed_.pop_ready(t)) route(ready, t);
    } else if (t_delivery == t) {
      auto node = deliveries_.extract(deliveries_.begin());
      deliver(node.mapped().router_id, std::move(node.mapped().request), t);
    } else {
      Replica& rep = *replicas_[stepper];
      if (rep.sim->engine().step().idle) rep.stalled = true;
    }
    if (settled_ != shown) bar.update(shown = settled_, fmt::format("t={:.1f}s", now));
  }
  for (size_t i = 0; i < replicas_.size(); ++i) {
    const Replica& rep = *replicas_[i];
    if (rep.load.alive && rep.sim->engine().has_unfinished())
      fail("simulation stalled: replica {} has {} requests unfinished but none can be scheduled", i,
           rep.sim->engine().requests().size());
  }
  bar.finish(fmt::format("t={:.1f}s", now));
  return finish_result(wall0);
}

ReplicaSetResult ReplicaSetLoop::finish_result(std::chrono::steady_clock::time_point wall0) {
  RunTotals totals;
  CacheCounters cache;
  bool caching = false;
  int64_t growths = 0, supervisor_preemptions = 0, retrainings = 0;
  SpeculationCounts spec;
  for (const auto& rep : replicas_) {
    const EngineCounters& c = rep->sim->engine().counters();
    totals.preemptions += c.preemptions;
    totals.allocation_failures += c.allocation_failures;
    totals.swapped_bytes += c.swapped_bytes;
    totals.recomputed_tokens += c.recomputed_tokens;
    growths += c.reservation_growths;
    supervisor_preemptions += c.supervisor_preemptions;
    if (const LengthPredictor* p = rep->sim->predictor()) retrainings += p->stats().retrainings;
    spec.verify_steps += c.spec_verify_chunks;
    spec.draft_tokens += c.spec_draft_tokens;
    spec.accepted_tokens += c.spec_accepted_tokens;
    spec.pauses += c.spec_pauses;
    spec.paused_steps += c.spec_paused_steps;
    rep->report.preemptions = c.preemptions;
    rep->report.clock_s = rep->sim->clock().now();
    if (const ConversationCache* cc = rep->sim->cache()) {
      caching = true;
      rep->report.cache = cc->counters();
      cache += cc->counters();
    }
    result_.sim.iterations.insert(result_.sim.iterations.end(), rep->observer->iterations.begin(),
                                  rep->observer->iterations.end());
    result_.replicas.push_back(rep->report);
  }
  SimResult& sim = result_.sim;
  sim.device_blocks = replicas_.front()->sim->kv().usage().device.total;
  sim.kv_groups = replicas_.front()->sim->kv().config().groups;
  const SchedulerConfig& sc = replicas_.front()->sim->scheduler_config();
  if (policy_uses_token_budget(sc.policy)) sim.token_budget = resolve_token_budget(sc);
  sim.summary = summarize(sc.policy, sim.records, sim.iterations, totals);
  if (tally_) sim.summary.predictions = tally_->summary(growths, supervisor_preemptions, retrainings);
  if (replicas_.front()->sim->engine().config().drafter) sim.summary.speculation = spec;
  sim.slo_attainment = slo_attainment(sim.records);
  sim.slo_attainment_by_class = slo_attainment_by_class(sim.records);
  sim.summary.slo_attainment = sim.slo_attainment;
  if (caching) {
    sim.summary.cache = cache;
  } else if (history_tokens_ > 0) {
    sim.summary.cache = stateless_cache_counters(lookup_tokens_, history_tokens_);
  }
  if (shared_) result_.shared = shared_->counters();
  sim.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - wall0).count();
  return std::move(result_);
}

}  // namespace

ReplicaSetResult run_replica_set(const SimSetup& setup, const ReplicaSetOptions& options,
                                 const std::vector<TraceEntry>& trace,
                                 const std::function<EngineObserver*(size_t)>& observer) {
  ReplicaSetLoop loop(setup, options, trace, observer);
  return loop.run();
}

}  // namespace seer
