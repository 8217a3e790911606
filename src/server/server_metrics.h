#pragma once
// The server's /metrics: the metric names of docs/architecture.md §3 as Prometheus series.
#include <optional>
#include <string>

#include "predict/length_predictor.h"
#include "scheduler/request.h"
#include "server/live_stats.h"
#include "server/prometheus.h"
#include "engine/prediction_tally.h"

namespace seer::server {

struct EngineGaugeValues {
  double requests_running = 0;
  double requests_waiting = 0;
  double kv_blocks_used = 0;
  double kv_blocks_total = 0;
  double kv_utilization = 0;
  double requests_swapped = 0;
  double kv_host_blocks_used = 0;
  double kv_host_blocks_total = 0;
  // Cumulative engine counters.
  double preemptions = 0;
  double allocation_failures = 0;
  double prompt_tokens = 0;
  double generation_tokens = 0;
  double swapped_bytes = 0;
  double recomputed_tokens = 0;
  double reservation_growths = 0;     // S3's supervisor
  double supervisor_preemptions = 0;
  double engine_recoveries = 0;
};

class ServerMetrics {
 public:
  ServerMetrics();

  // Per-request observations (seconds).
  void observe_ttft(double s) {
    ttft_.observe(s);
    live_.record_ttft(s);
  }
  void observe_tbt(double s) {
    tbt_.observe(s);
    live_.record_tbt(s);
  }
  void observe_e2e(double s) { e2e_.observe(s); }
  void observe_queue_time(double s) { queue_time_.observe(s); }
  void observe_iteration(double elapsed_s, double scheduler_s, int batch_size, int num_tokens);
  void count_finished(FinishReason reason);
  // A request with a length prediction that finished normally: its error and the
  // prediction counters (the `predictions` of `seer bench --json`).
  void observe_prediction(const Request& r);
  void count_rejected(int http_status);
  // Snapshot of the engine's state, published by the engine thread after each step.
  void publish_engine(const EngineGaugeValues& v);

  // The length predictor whose background retrainings /metrics reports; read at
  // scrape time, since retraining runs on its own thread, also while the engine idles.
  // `buckets`: the predictor's, to score bucket accuracy.
  void watch_predictor(const LengthPredictor* p, std::optional<LengthBuckets> buckets);
  std::string render() const {
    if (predictor_) predictor_retrainings_.advance_to(static_cast<double>(predictor_->stats().retrainings));
    return registry_.render();
  }
  MetricsRegistry& registry() { return registry_; }
  // τ of token-budgeted policies (gauge seer_token_budget), set once at start-up.
  void set_token_budget(int32_t tokens);
  int32_t token_budget() const { return static_cast<int32_t>(token_budget_.value()); }
  // The live view's numbers (GET /v1/state).
  LiveStats& live() { return live_; }

 private:
  MetricsRegistry registry_;
  LiveStats live_;
  const LengthPredictor* predictor_ = nullptr;
  std::optional<PredictionTally> predictions_;  // engine thread only
  Histogram &ttft_, &tbt_, &e2e_, &queue_time_, &iteration_time_, &scheduler_time_, &batch_size_, &batch_tokens_,
      &prediction_error_;
  Gauge &token_budget_, &running_, &waiting_, &kv_used_, &kv_total_, &kv_utilization_;
  Counter &preemptions_, &allocation_failures_, &prompt_tokens_, &generation_tokens_, &swapped_bytes_,
      &recomputed_tokens_, &reservation_growths_, &supervisor_preemptions_, &engine_recoveries_, &predictor_retrainings_,
      &predictions_total_, &predictions_scored_, &predictions_in_bucket_, &under_predictions_,
      &reserved_requests_, &over_reserved_tokens_;
};

}  // namespace seer::server
