#pragma once
// Reads a seer server's /metrics during a benchmark, so the run summary can carry
// what only the server knows: preemptions, swaps, recomputation (exact counter
// deltas), batch size, tokens and scheduler time per iteration (means exact from
// histogram sums; max and p99 estimated from the buckets, as Prometheus'
// histogram_quantile does), KV utilization (sampled). Servers without seer's
// metrics leave these at zero.
#include <atomic>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench/bench_report.h"
#include "bench/streaming_client.h"

namespace seer::bench {

// Prometheus text format -> value per series ("name" or "name{labels}" as written,
// without the `replica` label: series that differ only in it are summed).
std::map<std::string, double> parse_prometheus_text(const std::string& text);
// `series` ("name{a="x",b="y"}") without the label `label`.
std::string without_label(const std::string& series, const std::string& label);

struct HistogramDelta {
  std::vector<std::pair<double, double>> buckets;  // (upper bound, cumulative count), +Inf last
  double sum = 0, count = 0;
};
// after - before for histogram `name` (unlabelled).
HistogramDelta histogram_delta(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                               const std::string& name);
// Quantile q in [0, 1] by linear interpolation within the bucket (0 when empty).
double histogram_quantile(const HistogramDelta& h, double q);
// Upper bound of the highest bucket that gained observations (0 when empty).
double histogram_max_bound(const HistogramDelta& h);

// The `predictions` object [S3] from the change of seer's prediction counters;
// nullopt when the server predicts no lengths.
std::optional<PredictionSummary> prediction_delta(const std::map<std::string, double>& before,
                                                  const std::map<std::string, double>& after);

// The `cache` object (docs/pensieve.md, Metrics) from the change of seer's cache
// counters, with the same definitions as `seer sim`; nullopt when the server has no
// conversation cache.
std::optional<CacheCounters> cache_delta(const std::map<std::string, double>& before,
                                        const std::map<std::string, double>& after);

class ServerMetricsProbe {
 public:
  explicit ServerMetricsProbe(ServerUrl url, double sample_interval_s = 0.25);
  ~ServerMetricsProbe();

  // Takes the first snapshot and starts sampling; false when the server exposes no
  // seer metrics (then the probe stays idle).
  bool start();
  // Takes the last snapshot and computes the figures.
  ServerSide finish();
  // The label of seer_info{policy=...}, "" when absent.
  const std::string& policy() const { return policy_; }

 private:
  bool fetch(std::map<std::string, double>& out) const;

  ServerUrl url_;
  double interval_s_;
  std::map<std::string, double> before_;
  std::string policy_;
  std::vector<double> kv_samples_;
  std::atomic<bool> stop_{false};
  std::thread sampler_;
};

}  // namespace seer::bench
