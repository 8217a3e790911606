#pragma once
// The run summary shared by `seer sim`, `seer bench` and the server (docs/architecture.md §3):
// computed from plain per-request and per-iteration records, so it does not depend
// on how the times were obtained (virtual clock, wall clock, HTTP client).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "engine/prediction_tally.h"
#include "kv/conversation_cache.h"
#include "scheduler/request.h"

namespace seer {

struct RequestRecord {
  std::string id;  // trace or response id (not used by the figures)
  double arrival_s = 0;
  double first_scheduled_s = -1;  // -1: unknown (e.g. measured by a client)
  double first_token_s = -1;
  std::vector<double> token_times_s;  // one per output token
  double finish_s = -1;
  int32_t prompt_tokens = 0;
  int32_t output_tokens = 0;
  Slo slo;
  std::string workload_class;  // the trace's "class" (mixed workloads); may be empty
};

struct IterationRecord {
  double elapsed_s = 0;
  double scheduler_time_s = 0;
  int32_t batch_size = 0;
  int32_t num_tokens = 0;
  double kv_utilization = 0;
  bool idle = false;  // idle iterations are left out of the per-iteration figures
};

struct RunTotals {
  int64_t preemptions = 0;
  int64_t allocation_failures = 0;
  int64_t swapped_bytes = 0;
  int64_t recomputed_tokens = 0;
};

// Speculative decoding (docs/speculative.md): chunks that verified drafts, the
// drafts verified and those accepted.
struct SpeculationCounts {
  int64_t verify_steps = 0;
  int64_t draft_tokens = 0;
  int64_t accepted_tokens = 0;
  // The gate (engine/speculation_gate.h): requests paused, and their steps without drafts.
  int64_t pauses = 0;
  int64_t paused_steps = 0;
};

struct Distribution {
  double mean = 0, p50 = 0, p90 = 0, p99 = 0, max = 0;
};
struct MeanMax {
  double mean = 0, max = 0;
};

struct MetricsSummary {
  std::string policy;
  int64_t requests = 0;
  double duration_s = 0;  // first arrival to last finish
  double requests_per_s = 0, output_tokens_per_s = 0, total_tokens_per_s = 0;
  Distribution ttft_s, tbt_s, e2e_s, normalized_latency_s;
  MeanMax batch_size, tokens_per_iteration, kv_utilization;
  RunTotals totals;
  double scheduler_time_mean_s = 0, scheduler_time_p99_s = 0;
  std::optional<PredictionSummary> predictions;  // "predictions" in the JSON when set
  // Multi-turn KV reuse (docs/pensieve.md); set for multi-turn runs and caching
  // policies. recomputed_tokens there: history tokens computed again.
  std::optional<CacheCounters> cache;
  std::optional<SpeculationCounts> speculation;  // "speculation" in the JSON when set
  // Not part of the JSON object; used by the capacity search.
  double scheduling_delay_p50_s = 0;  // first scheduled - arrival
  std::optional<double> slo_attainment;  // slo_attainment() of the run's requests (sim)
};

// Percentile with linear interpolation between closest ranks (numpy's default);
// 0 for an empty sample. `values` need not be sorted.
double percentile(std::vector<double> values, double p);
Distribution distribution(const std::vector<double>& values);

MetricsSummary summarize(const std::string& policy, const std::vector<RequestRecord>& requests,
                         const std::vector<IterationRecord>& iterations, const RunTotals& totals);

// Exactly the keys of `seer sim --json` (see the list), in that order, plus
// "predictions" when a length predictor ran and "cache" for multi-turn runs.
nlohmann::ordered_json summary_json(const MetricsSummary& s);
nlohmann::ordered_json predictions_json(const PredictionSummary& p);
// {"verify_steps", "draft_tokens", "accepted_tokens", "acceptance_rate",
//  "tokens_per_step" (1 + accepted / verify_steps)}
nlohmann::ordered_json speculation_json(const SpeculationCounts& c);
// {"hit_tokens_device", "hit_tokens_host", "recomputed_tokens", "dropped_tokens",
//  "swapped_out_bytes", "swapped_in_bytes", "hit_rate"}
nlohmann::ordered_json cache_json(const CacheCounters& c);
// A human-readable table for the terminal.
std::string render_summary_table(const MetricsSummary& s);

// Share of requests that meet their SLO: TTFT <= ttft_s, every gap between tokens
// <= tbt_s, e2e <= deadline_s (bounds of 0 are absent). A request's own SLO fields
// win over `fallback`. Requests with no bound at all are not counted; nullopt when
// no request has one.
std::optional<double> slo_attainment(const std::vector<RequestRecord>& requests, const Slo& fallback = {});
// slo_attainment() of each workload class that has requests with an SLO; empty
// when no request names a class.
std::map<std::string, double> slo_attainment_by_class(const std::vector<RequestRecord>& requests);

}  // namespace seer
