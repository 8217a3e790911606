#pragma once
// The simulator's one driver: a replica set (docs/replicas.md) of N engines, each with its own
// KV manager, scheduler and conversation cache (sim/sim_engine.h), driven by one
// discrete-event loop. Events in time order: a replica failure, arrivals (the
// router numbers each request and picks its replica), deliveries (a request
// whose KV comes from the shared tier reaches its replica after the fetch), and
// engine steps (the busy replica with the earliest clock steps next). An idle
// replica's clock jumps to its next delivery; clocks never go backwards.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "kv/shared_kv_tier.h"
#include "sim/catalog.h"
#include "sim/sim_runner.h"

namespace seer {

struct ReplicaSetOptions {
  int32_t replicas = 1;
  std::string routing = "round-robin";  // sim/routing/router.h
  std::optional<SharedTierSpec> shared_tier;  // none: replicas share nothing
  SharedTierLimits shared_limits;  // byte cap and idle TTL, as `seer serve --shared-kv-max-bytes/-ttl`
  // Fetch from the shared tier only when the transfer takes less time than
  // prefilling the fetched tokens again (false: whenever something is stored).
  bool fetch_only_if_faster = true;
  int32_t fail_replica = -1;  // >= 0: this replica dies at fail_at_s
  double fail_at_s = 0;
};

enum class RequestOutcome { Pending, Finished, Rejected, Failed };

// One request as the router numbered it (its id is the index in routed).
struct RoutedRequest {
  size_t trace_index = 0;  // into the trace sorted by arrival (ArrivalFeed::entries)
  int32_t replica = -1;
  RequestOutcome outcome = RequestOutcome::Pending;
  int32_t shared_fetch_tokens = 0;  // fetched from the shared tier before delivery
  bool fetch_declined = false;      // stored, but recomputing was faster
};

struct ReplicaReport {
  bool alive = true;
  int64_t routed = 0, finished = 0, rejected = 0, failed = 0;
  double clock_s = 0;
  CacheCounters cache;
  int64_t preemptions = 0;
};

struct ReplicaSetResult {
  SimResult sim;  // all replicas together: summary, records, iterations
  std::vector<ReplicaReport> replicas;
  std::vector<RoutedRequest> routed;
  int64_t failed = 0;  // in flight on (or on the way to) a replica when it died
  std::optional<SharedTierCounters> shared;
  double shared_fetch_s = 0;  // sum of the fetch times requests waited
  int64_t fetches_declined = 0;  // recomputed because that was faster than the transfer
};

// Throws seer::Error for bad options (naming the flag). `observer(i)` (optional)
// returns an extra observer for replica i's engine (tests).
ReplicaSetResult run_replica_set(const SimSetup& setup, const ReplicaSetOptions& options,
                                 const std::vector<TraceEntry>& trace,
                                 const std::function<EngineObserver*(size_t)>& observer = {});

}  // namespace seer
