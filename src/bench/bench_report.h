#pragma once
// Results of `seer bench`: the client-side measurements folded into the shared run
// summary (sim/metrics_summary.h: the same names and JSON schema as `seer sim
// --json`), plus what only a benchmark knows (failures, SLO attainment), a table
// and an SVG plot.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/load_runner.h"
#include "sim/metrics_summary.h"

namespace seer::bench {

// What the server itself reported over the run (from seer's /metrics), when known.
struct ServerSide {
  bool known = false;
  RunTotals totals;
  MeanMax batch_size, tokens_per_iteration, kv_utilization;
  double scheduler_time_mean_s = 0, scheduler_time_p99_s = 0;
  // Conversation / prefix cache deltas (servers with a cache; lookup_tokens: the
  // prompt tokens the server counted).
  std::optional<CacheCounters> cache;
  // Output-length prediction [S3] (servers running a length predictor).
  std::optional<PredictionSummary> predictions;
  // Speculative decoding (servers that export seer_spec_*).
  std::optional<SpeculationCounts> speculation;
};

struct BenchSummary {
  MetricsSummary summary;                 // successful requests only
  std::optional<double> slo_attainment;   // over successful and failed requests
  int64_t sent = 0;
  int64_t failed = 0;
  int64_t short_outputs = 0;              // fewer tokens than max_tokens (server ignored ignore_eos?)
  std::vector<std::string> errors;        // the first few distinct error messages
};

// Client records (arrival = when the request was sent) of the successful requests.
std::vector<RequestRecord> request_records(const std::vector<TurnResult>& results);

BenchSummary summarize_bench(const std::vector<TurnResult>& results, const std::string& label,
                             const Slo& fallback_slo, const ServerSide& server);

// summary_json's keys, then "slo_attainment" (null when no SLO), "failed_requests".
nlohmann::ordered_json bench_json(const BenchSummary& b);
std::string bench_table(const BenchSummary& b);

// Latency CDFs (TTFT, TBT, end-to-end) of the successful requests.
std::string bench_plot_svg(const std::vector<TurnResult>& results, const std::string& title);

}  // namespace seer::bench
