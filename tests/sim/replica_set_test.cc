// The replica set (docs/replicas.md): one event loop over several simulated
// engines. N = 1 is the plain simulator; clocks never go backwards; every request
// settles exactly once on one replica; affinity keeps conversations home; the
// shared tier's fetches are counted in tokens and bytes; a replica's failure
// fails its in-flight requests (counted) and moves its conversations.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <map>
#include <random>
#include <set>

#include "common/error.h"
#include "sim/replica_report.h"
#include "sim/replica_set.h"
#include "sim_test_util.h"

namespace seer {
namespace {

std::vector<TraceEntry> conversations(uint64_t seed, int n, double gap_mean_s = 0.5) {
  return testing::random_conversations(seed, n, {.gap_mean_s = gap_mean_s});
}

SimSetup setup(const std::string& policy) {
  SimSetup s = testing::small_setup(policy, /*kv_tokens=*/6000);
  s.swap_space_gib = 1;
  s.max_tokens = 256;
  return s;
}

std::map<std::string, std::set<int32_t>> replicas_per_conversation(const ReplicaSetResult& r,
                                                                   const std::vector<TraceEntry>& sorted) {
  std::map<std::string, std::set<int32_t>> out;
  for (const auto& routed : r.routed) out[sorted[routed.trace_index].conversation].insert(routed.replica);
  return out;
}

std::vector<TraceEntry> sorted_by_arrival(std::vector<TraceEntry> t) {
  std::stable_sort(t.begin(), t.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  return t;
}

TEST(ReplicaSet, OneReplicaGivesThePlainSimulatorsResult) {
  for (const char* policy : {"vllm", "pensieve"}) {
    const auto trace = conversations(1, 30);
    const SimSetup s = setup(policy);
    SimResult plain = run_simulation(s, trace);
    ReplicaSetOptions o;
    ReplicaSetResult set = run_replica_set(s, o, trace);
    ASSERT_EQ(set.sim.records.size(), plain.records.size()) << policy;
    for (size_t i = 0; i < plain.records.size(); ++i) {
      const RequestRecord &a = plain.records[i], &b = set.sim.records[i];
      EXPECT_EQ(a.id, b.id);
      EXPECT_DOUBLE_EQ(a.arrival_s, b.arrival_s) << a.id;
      EXPECT_DOUBLE_EQ(a.first_token_s, b.first_token_s) << a.id;
      EXPECT_DOUBLE_EQ(a.finish_s, b.finish_s) << a.id;
      EXPECT_EQ(a.prompt_tokens, b.prompt_tokens) << a.id;
      EXPECT_EQ(a.output_tokens, b.output_tokens) << a.id;
    }
    EXPECT_EQ(set.sim.rejected, plain.rejected);
    EXPECT_DOUBLE_EQ(set.sim.summary.normalized_latency_s.p90, plain.summary.normalized_latency_s.p90);
    ASSERT_TRUE(plain.summary.cache && set.sim.summary.cache);
    EXPECT_EQ(set.sim.summary.cache->hit_tokens_device, plain.summary.cache->hit_tokens_device);
    EXPECT_EQ(set.sim.summary.cache->recomputed_tokens, plain.summary.cache->recomputed_tokens);
  }
}

// Every iteration of a replica starts where the one before ended, or later.
class ClockWatch final : public EngineObserver {
 public:
  void on_iteration(const IterationStats& st) override {
    EXPECT_GE(st.start_s, end_ - 1e-12) << "a replica's clock went backwards";
    end_ = st.start_s + st.elapsed_s;
    ++iterations;
  }
  void on_finished(const Request& r) override { finished.push_back(r.external_id); }
  int64_t iterations = 0;
  std::vector<std::string> finished;

 private:
  double end_ = 0;
};

TEST(ReplicaSet, ClocksNeverGoBackwardsAndEveryRequestFinishesOnExactlyOneReplica) {
  for (const char* routing : {"round-robin", "least-loaded", "conversation-affinity"}) {
    const auto trace = conversations(2, 40, 0.2);
    std::vector<ClockWatch> watch(3);
    ReplicaSetOptions o;
    o.replicas = 3;
    o.routing = routing;
    ReplicaSetResult r = run_replica_set(setup("pensieve"), o, trace, [&](size_t i) { return &watch[i]; });
    ASSERT_EQ(r.routed.size(), trace.size()) << routing;
    std::map<std::string, int> finished_on;
    for (size_t i = 0; i < watch.size(); ++i) {
      EXPECT_GT(watch[i].iterations, 0) << routing << " replica " << i;
      for (const auto& id : watch[i].finished) ++finished_on[id];
      EXPECT_EQ(r.replicas[i].finished, static_cast<int64_t>(watch[i].finished.size()));
    }
    for (const auto& e : trace) EXPECT_EQ(finished_on[e.id], 1) << routing << " " << e.id;
    for (const auto& routed : r.routed) EXPECT_EQ(routed.outcome, RequestOutcome::Finished);
    EXPECT_EQ(r.sim.records.size(), trace.size());
    EXPECT_EQ(r.failed, 0);
  }
}

TEST(ReplicaSet, AffinityKeepsEachConversationOnOneReplicaRoundRobinSpreadsIt) {
  const auto trace = conversations(3, 40, 0.2);
  const auto sorted = sorted_by_arrival(trace);
  ReplicaSetOptions o;
  o.replicas = 4;
  o.routing = "conversation-affinity";
  ReplicaSetResult affinity = run_replica_set(setup("pensieve"), o, trace);
  for (const auto& [conv, reps] : replicas_per_conversation(affinity, sorted)) EXPECT_EQ(reps.size(), 1u) << conv;
  o.routing = "round-robin";
  ReplicaSetResult rr = run_replica_set(setup("pensieve"), o, trace);
  int spread = 0;
  for (const auto& [conv, reps] : replicas_per_conversation(rr, sorted)) spread += reps.size() > 1;
  EXPECT_GT(spread, 10);
  // Affinity finds the history where it was left: more cache hits.
  const auto hits = [](const ReplicaSetResult& r) {
    return r.sim.summary.cache->hit_tokens_device + r.sim.summary.cache->hit_tokens_host;
  };
  EXPECT_GT(hits(affinity), hits(rr));
}

SharedTierSpec tier(double bandwidth) {
  SharedTierSpec t;
  t.name = "test";
  t.latency_s = 1e-4;
  t.bandwidth = bandwidth;
  return t;
}

TEST(ReplicaSet, SharedTierFetchesAreCountedInTokensAndBytes) {
  const auto trace = conversations(4, 40, 0.2);
  const SimSetup s = setup("pensieve");
  ReplicaSetOptions o;
  o.replicas = 3;
  o.routing = "round-robin";
  ReplicaSetResult local = run_replica_set(s, o, trace);
  o.shared_tier = tier(1e12);  // faster than any recompute
  ReplicaSetResult shared = run_replica_set(s, o, trace);
  ASSERT_TRUE(shared.shared.has_value());
  const SharedTierCounters& c = *shared.shared;
  int64_t fetches = 0, tokens = 0;
  for (const auto& routed : shared.routed) {
    fetches += routed.shared_fetch_tokens > 0;
    tokens += routed.shared_fetch_tokens;
  }
  EXPECT_GT(c.fetches, 10);
  EXPECT_EQ(c.fetches, fetches);
  EXPECT_EQ(c.fetched_tokens, tokens);
  EXPECT_EQ(c.fetched_bytes, c.fetched_tokens * CostModel(s.model, s.hardware, s.cost).kv_bytes_per_token());
  EXPECT_GT(c.stored_bytes, 0);
  EXPECT_EQ(shared.sim.records.size(), trace.size());
  EXPECT_LT(shared.sim.summary.cache->recomputed_tokens, local.sim.summary.cache->recomputed_tokens);
  // Only the chunks host tiers drop: far less is stored, and fewer histories come back.
  SimSetup evicted_only = s;
  evicted_only.shared_write_through = false;
  ReplicaSetResult evicted = run_replica_set(evicted_only, o, trace);
  EXPECT_LT(evicted.shared->stored_bytes, c.stored_bytes);
  EXPECT_LT(evicted.shared->fetched_tokens, c.fetched_tokens);
  EXPECT_EQ(evicted.sim.records.size(), trace.size());
  // A tier slower than recomputing is not used.
  o.shared_tier = tier(1e6);
  ReplicaSetResult slow = run_replica_set(s, o, trace);
  EXPECT_EQ(slow.shared->fetches, 0);
  EXPECT_GT(slow.fetches_declined, 0);
  o.fetch_only_if_faster = false;
  ReplicaSetResult forced = run_replica_set(s, o, trace);
  EXPECT_GT(forced.shared->fetches, 0);
  EXPECT_GT(forced.shared_fetch_s, 1.0);
}

TEST(ReplicaSet, AFailedReplicasRequestsFailAndItsConversationsMove) {
  const auto trace = conversations(5, 60, 0.1);
  const auto sorted = sorted_by_arrival(trace);
  for (bool with_tier : {false, true}) {
    ReplicaSetOptions o;
    o.replicas = 3;
    o.routing = "conversation-affinity";
    o.fail_replica = 1;
    o.fail_at_s = 4.0;
    if (with_tier) o.shared_tier = tier(1e12);
    ReplicaSetResult r = run_replica_set(setup("pensieve"), o, trace);  // invariants checked every step
    EXPECT_FALSE(r.replicas[1].alive);
    EXPECT_GT(r.failed, 0);
    EXPECT_EQ(r.replicas[1].failed, r.failed);
    int64_t finished = 0, failed = 0, rejected = 0;
    for (const auto& routed : r.routed) {
      EXPECT_NE(routed.outcome, RequestOutcome::Pending);
      finished += routed.outcome == RequestOutcome::Finished;
      failed += routed.outcome == RequestOutcome::Failed;
      rejected += routed.outcome == RequestOutcome::Rejected;
    }
    EXPECT_EQ(finished + failed + rejected, static_cast<int64_t>(trace.size()));  // nothing lost silently
    EXPECT_EQ(failed, r.failed);
    EXPECT_EQ(finished, static_cast<int64_t>(r.sim.records.size()));
    // A conversation whose turn failed on replica 1 continues elsewhere.
    std::map<std::string, std::vector<int32_t>> path;
    for (const auto& routed : r.routed) path[sorted[routed.trace_index].conversation].push_back(routed.replica);
    int moved = 0;
    for (const auto& [conv, reps] : path)
      for (size_t k = 1; k < reps.size(); ++k) moved += reps[k - 1] == 1 && reps[k] != 1;
    EXPECT_GT(moved, 0);
    if (with_tier) {
      EXPECT_GT(r.shared->fetches, 0);
    }
  }
}

TEST(ReplicaSet, BadOptionsNameTheFlag) {
  const auto trace = conversations(6, 3);
  ReplicaSetOptions o;
  o.replicas = 0;
  EXPECT_THROW(run_replica_set(setup("vllm"), o, trace), Error);
  o.replicas = 2;
  o.fail_replica = 2;
  EXPECT_THROW(run_replica_set(setup("vllm"), o, trace), Error);
  ReplicaFlags f;
  f.fail = "1at5";
  EXPECT_THROW(make_replica_options(f, ""), Error);
  f.fail = "1@5";
  EXPECT_EQ(make_replica_options(f, "").fail_at_s, 5.0);
  f.shared_tier = true;
  f.shared_tier_spec = "nope";
  EXPECT_THROW(make_replica_options(f, ""), Error);
  f.shared_tier_spec = "redis-25GbE";
  EXPECT_GT(make_replica_options(f, "").shared_tier->bandwidth, 0);
}

}  // namespace
}  // namespace seer
