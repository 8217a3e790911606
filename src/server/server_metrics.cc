#include "server/server_metrics.h"

#include <cstdlib>

#include "server/openai_response.h"

namespace seer::server {

namespace {

// Latency buckets from 1 ms to ~80 s (as vLLM's, roughly); TBT finer at the low end.
const std::vector<double> kLatencyBuckets = {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
                                             0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
// Counts (batch size, tokens) in steps of about 1.5x, so a maximum read back from the
// buckets (seer bench does) is within that factor.
const std::vector<double> kCountBuckets = {1,   2,   3,    4,    6,    8,    12,   16,   24,   32,    48,   64,
                                           96,  128, 192,  256,  384,  512,  768,  1024, 1536, 2048,  3072, 4096,
                                           6144, 8192, 12288, 16384, 24576, 32768, 49152, 65536};
const std::vector<double> kTbtBuckets = {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03, 0.04,
                                         0.05,   0.075, 0.1,    0.15,  0.2,  0.3,   0.4,  0.5,   0.75, 1.0, 2.5};

}  // namespace

ServerMetrics::ServerMetrics()
    : ttft_(registry_.histogram("seer_time_to_first_token_seconds", "Time from arrival to the first output token.",
                                kLatencyBuckets)),
      tbt_(registry_.histogram("seer_time_between_tokens_seconds",
                               "Time between consecutive output tokens of a request.", kTbtBuckets)),
      e2e_(registry_.histogram("seer_e2e_request_latency_seconds",
                               "End-to-end latency from arrival to the last output token.", kLatencyBuckets)),
      queue_time_(registry_.histogram("seer_request_queue_time_seconds",
                                      "Time from arrival until the request first ran.", kLatencyBuckets)),
      iteration_time_(registry_.histogram("seer_iteration_time_seconds", "Duration of one engine iteration.",
                                          kTbtBuckets)),
      scheduler_time_(registry_.histogram("seer_scheduler_time_seconds",
                                          "Time spent in the scheduler per iteration.",
                                          exponential_buckets(1e-6, 4, 10))),
      batch_size_(registry_.histogram("seer_batch_size", "Requests per iteration.", kCountBuckets)),
      batch_tokens_(registry_.histogram("seer_tokens_per_iteration", "Tokens per iteration.", kCountBuckets)),
      prediction_error_(registry_.histogram("seer_length_prediction_error_tokens",
                                            "Absolute error of the predicted output length (tokens) [S3].",
                                            {0, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096})),
      token_budget_(registry_.gauge("seer_token_budget",
                                    "Tokens per iteration the scheduler may plan (token-budgeted policies).")),
      running_(registry_.gauge("seer_requests_running", "Requests being processed by the engine.")),
      waiting_(registry_.gauge("seer_requests_waiting", "Requests waiting to be scheduled.")),
      kv_used_(registry_.gauge("seer_kv_blocks_used", "KV blocks requests hold (unlabelled: device tier).")),
      kv_total_(registry_.gauge("seer_kv_blocks_total", "Device KV blocks in the pool.")),
      kv_utilization_(registry_.gauge("seer_kv_utilization", "Used device KV blocks / total.")),
      preemptions_(registry_.counter("seer_preemptions_total", "Requests preempted by the scheduler.")),
      allocation_failures_(registry_.counter("seer_allocation_failures_total", "KV block allocation failures.")),
      prompt_tokens_(registry_.counter("seer_prompt_tokens_total", "Prompt tokens prefilled.")),
      generation_tokens_(registry_.counter("seer_generation_tokens_total", "Output tokens generated.")),
      swapped_bytes_(registry_.counter("seer_swapped_bytes_total", "KV bytes moved between tiers.")),
      recomputed_tokens_(registry_.counter("seer_recomputed_tokens_total", "Tokens recomputed after preemption.")),
      reservation_growths_(registry_.counter("seer_reservation_growths_total",
                                             "KV reservations the supervisor doubled [S3].")),
      supervisor_preemptions_(registry_.counter("seer_supervisor_preemptions_total",
                                                "Requests the supervisor preempted: their grown reservation did not "
                                                "fit [S3].")),
      engine_recoveries_(registry_.counter("seer_engine_recoveries_total",
                                           "Failures inside an engine step the server recovered from: the requests "
                                           "in flight ended with an error, the KV state was rebuilt.")),
      predictor_retrainings_(registry_.counter("seer_predictor_retrainings_total",
                                               "Length predictors retrained and swapped in [S3].")),
      predictions_total_(registry_.counter("seer_length_predictions_total",
                                           "Finished requests that had an output-length prediction [S3].")),
      predictions_scored_(registry_.counter("seer_length_predictions_scored_total",
                                            "Finished predicted requests whose bucket could be scored [S3].")),
      predictions_in_bucket_(registry_.counter("seer_length_predictions_in_bucket_total",
                                               "Finished requests whose true length fell in the predicted bucket [S3].")),
      under_predictions_(registry_.counter("seer_length_under_predictions_total",
                                           "Finished requests longer than their predicted length [S3].")),
      reserved_requests_(registry_.counter("seer_kv_reserved_requests_total",
                                           "Finished requests that held a KV reservation (exact allocation) [S3].")),
      over_reserved_tokens_(registry_.counter("seer_kv_over_reserved_tokens_total",
                                              "KV tokens reserved but unused at finish, summed [S3].")) {
  for (FinishReason r : {FinishReason::Stop, FinishReason::Length, FinishReason::Abort, FinishReason::Error})
    registry_.counter("seer_requests_finished_total", "Requests finished, by finish reason.",
                      {{"reason", openai_finish_reason(r)}});
}

void ServerMetrics::observe_iteration(double elapsed_s, double scheduler_s, int batch_size, int num_tokens) {
  iteration_time_.observe(elapsed_s);
  scheduler_time_.observe(scheduler_s);
  batch_size_.observe(batch_size);
  batch_tokens_.observe(num_tokens);
}

void ServerMetrics::watch_predictor(const LengthPredictor* p, std::optional<LengthBuckets> buckets) {
  predictor_ = p;
  if (p) predictions_.emplace(buckets);
}

void ServerMetrics::observe_prediction(const Request& r) {
  if (!r.predicted_output_len) return;
  prediction_error_.observe(std::abs(r.num_output() - *r.predicted_output_len));
  if (!predictions_) return;
  predictions_->add(r);
  const PredictionCounts& c = predictions_->counts();
  predictions_total_.advance_to(c.predicted);
  predictions_scored_.advance_to(c.scored);
  predictions_in_bucket_.advance_to(c.correct);
  under_predictions_.advance_to(c.under);
  reserved_requests_.advance_to(c.reserved_requests);
  over_reserved_tokens_.advance_to(c.over_reserved_tokens);
}

void ServerMetrics::set_token_budget(int32_t tokens) { token_budget_.set(tokens); }

void ServerMetrics::count_finished(FinishReason reason) {
  const char* name = openai_finish_reason(reason);
  registry_.counter("seer_requests_finished_total", "Requests finished, by finish reason.",
                    {{"reason", name ? name : "none"}})
      .inc();
}

void ServerMetrics::count_rejected(int http_status) {
  registry_.counter("seer_requests_rejected_total", "Requests answered with an error status.",
                    {{"status", std::to_string(http_status)}})
      .inc();
}

void ServerMetrics::publish_engine(const EngineGaugeValues& v) {
  live_.record_engine({static_cast<int64_t>(v.requests_waiting - v.requests_swapped), static_cast<int64_t>(v.requests_running),
                       static_cast<int64_t>(v.requests_swapped), static_cast<int64_t>(v.kv_blocks_used),
                       static_cast<int64_t>(v.kv_blocks_total), static_cast<int64_t>(v.kv_host_blocks_used),
                       static_cast<int64_t>(v.kv_host_blocks_total)});
  running_.set(v.requests_running);
  waiting_.set(v.requests_waiting);
  kv_used_.set(v.kv_blocks_used);
  kv_total_.set(v.kv_blocks_total);
  kv_utilization_.set(v.kv_utilization);
  preemptions_.advance_to(v.preemptions);
  allocation_failures_.advance_to(v.allocation_failures);
  prompt_tokens_.advance_to(v.prompt_tokens);
  generation_tokens_.advance_to(v.generation_tokens);
  swapped_bytes_.advance_to(v.swapped_bytes);
  recomputed_tokens_.advance_to(v.recomputed_tokens);
  reservation_growths_.advance_to(v.reservation_growths);
  supervisor_preemptions_.advance_to(v.supervisor_preemptions);
  engine_recoveries_.advance_to(v.engine_recoveries);
}

}  // namespace seer::server
