// The Prometheus text format of the metrics registry and the server's metric set.
#include <cmath>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "server/prometheus.h"
#include "server/server_metrics.h"

namespace seer::server {
namespace {

bool has_line(const std::string& text, const std::string& line) {
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);)
    if (l == line) return true;
  return false;
}

TEST(Prometheus, CounterAndGauge) {
  MetricsRegistry reg;
  reg.counter("x_total", "An x.").inc(2);
  reg.gauge("y", "A y.").set(-1.5);
  std::string text = reg.render();
  EXPECT_TRUE(has_line(text, "# HELP x_total An x."));
  EXPECT_TRUE(has_line(text, "# TYPE x_total counter"));
  EXPECT_TRUE(has_line(text, "x_total 2"));
  EXPECT_TRUE(has_line(text, "# TYPE y gauge"));
  EXPECT_TRUE(has_line(text, "y -1.5"));
}

TEST(Prometheus, HistogramBucketsAreCumulativeWithInf) {
  MetricsRegistry reg;
  Histogram& h = reg.histogram("lat_seconds", "Latency.", {0.1, 1.0});
  h.observe(0.05);
  h.observe(0.1);  // le is inclusive
  h.observe(0.5);
  h.observe(7);
  std::string text = reg.render();
  EXPECT_TRUE(has_line(text, "# TYPE lat_seconds histogram"));
  EXPECT_TRUE(has_line(text, "lat_seconds_bucket{le=\"0.1\"} 2"));
  EXPECT_TRUE(has_line(text, "lat_seconds_bucket{le=\"1\"} 3"));
  EXPECT_TRUE(has_line(text, "lat_seconds_bucket{le=\"+Inf\"} 4"));
  EXPECT_TRUE(has_line(text, "lat_seconds_sum 7.65"));
  EXPECT_TRUE(has_line(text, "lat_seconds_count 4"));
}

TEST(Prometheus, LabelsAreEscapedAndFamiliesShareHeader) {
  MetricsRegistry reg;
  reg.counter("r_total", "R.", {{"reason", "a\"b\\c\nd"}}).inc();
  reg.counter("r_total", "R.", {{"reason", "stop"}}).inc(3);
  reg.histogram("h", "H.", {1}, {{"k", "v"}}).observe(0.5);
  std::string text = reg.render();
  EXPECT_TRUE(has_line(text, "r_total{reason=\"a\\\"b\\\\c\\nd\"} 1"));
  EXPECT_TRUE(has_line(text, "r_total{reason=\"stop\"} 3"));
  EXPECT_TRUE(has_line(text, "h_bucket{k=\"v\",le=\"1\"} 1"));
  EXPECT_TRUE(has_line(text, "h_sum{k=\"v\"} 0.5"));
  size_t first = text.find("# TYPE r_total"), second = text.find("# TYPE r_total", first + 1);
  EXPECT_NE(first, std::string::npos);
  EXPECT_EQ(second, std::string::npos);
}

TEST(Prometheus, ConstantLabelsGoOnEverySeries) {
  MetricsRegistry reg;
  reg.set_constant_labels({{"replica", "r\"1"}});
  reg.counter("plain_total", "P.").inc();
  reg.counter("r_total", "R.", {{"reason", "stop"}}).inc(3);
  reg.histogram("h", "H.", {1}, {{"k", "v"}}).observe(0.5);
  reg.histogram("g", "G.", {1}).observe(2);
  std::string text = reg.render();
  EXPECT_TRUE(has_line(text, "plain_total{replica=\"r\\\"1\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "r_total{replica=\"r\\\"1\",reason=\"stop\"} 3")) << text;
  EXPECT_TRUE(has_line(text, "h_bucket{replica=\"r\\\"1\",k=\"v\",le=\"1\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "g_bucket{replica=\"r\\\"1\",le=\"+Inf\"} 1")) << text;
  EXPECT_TRUE(has_line(text, "g_count{replica=\"r\\\"1\"} 1")) << text;
}

TEST(Prometheus, SameSeriesIsReturnedTwice) {
  MetricsRegistry reg;
  EXPECT_EQ(&reg.gauge("g", "G."), &reg.gauge("g", "G."));
  EXPECT_THROW(reg.counter("g", "G."), std::logic_error);
  EXPECT_THROW(reg.gauge("bad-name", "B."), std::logic_error);
}

TEST(Prometheus, CounterAdvanceIsMonotonic) {
  Counter c;
  c.advance_to(5);
  c.advance_to(3);
  EXPECT_EQ(c.value(), 5);
  EXPECT_THROW(c.inc(-1), std::logic_error);
}

TEST(Prometheus, SpecialValues) {
  EXPECT_EQ(format_sample_value(INFINITY), "+Inf");
  EXPECT_EQ(format_sample_value(-INFINITY), "-Inf");
  EXPECT_EQ(format_sample_value(NAN), "NaN");
  EXPECT_EQ(format_sample_value(0.25), "0.25");
}

TEST(Prometheus, ConcurrentObservationsAreAllCounted) {
  MetricsRegistry reg;
  Histogram& h = reg.histogram("c", "C.", {0.5});
  Counter& n = reg.counter("n_total", "N.");
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < 10000; ++i) {
        h.observe(i % 2 ? 0.25 : 1.0);
        n.inc();
      }
    });
  for (auto& t : threads) t.join();
  auto s = h.snapshot();
  EXPECT_EQ(s.count, 40000u);
  EXPECT_EQ(s.cumulative[0], 20000u);
  EXPECT_EQ(n.value(), 40000);
}

TEST(ServerMetrics, ExposesTheRequiredSeries) {
  ServerMetrics m;
  m.observe_ttft(0.2);
  m.observe_tbt(0.01);
  m.observe_e2e(1.0);
  m.count_finished(FinishReason::Length);
  EngineGaugeValues v;
  v.requests_running = 2;
  v.requests_waiting = 1;
  v.kv_blocks_used = 7;
  v.kv_blocks_total = 64;
  v.preemptions = 3;
  v.prompt_tokens = 100;
  v.generation_tokens = 50;
  m.publish_engine(v);
  std::string text = m.render();
  for (const char* hist : {"seer_time_to_first_token_seconds", "seer_time_between_tokens_seconds",
                           "seer_e2e_request_latency_seconds"}) {
    EXPECT_TRUE(has_line(text, std::string("# TYPE ") + hist + " histogram")) << hist;
    EXPECT_TRUE(has_line(text, std::string(hist) + "_count 1")) << hist;
  }
  EXPECT_TRUE(has_line(text, "seer_requests_running 2"));
  EXPECT_TRUE(has_line(text, "seer_requests_waiting 1"));
  EXPECT_TRUE(has_line(text, "seer_kv_blocks_used 7"));
  EXPECT_TRUE(has_line(text, "seer_kv_blocks_total 64"));
  EXPECT_TRUE(has_line(text, "# TYPE seer_preemptions_total counter"));
  EXPECT_TRUE(has_line(text, "seer_preemptions_total 3"));
  EXPECT_TRUE(has_line(text, "seer_prompt_tokens_total 100"));
  EXPECT_TRUE(has_line(text, "seer_generation_tokens_total 50"));
  EXPECT_TRUE(has_line(text, "seer_requests_finished_total{reason=\"length\"} 1"));
  EXPECT_TRUE(has_line(text, "seer_requests_finished_total{reason=\"stop\"} 0"));
}

// The counters behind `seer bench --json`'s `predictions` object [S3].
TEST(ServerMetrics, CountsLengthPredictionsOfFinishedRequests) {
  ServerMetrics m;
  OraclePredictor oracle(LengthBuckets{4, 100});
  m.watch_predictor(&oracle, LengthBuckets{4, 100});
  auto finished = [](int32_t output, int32_t predicted, int32_t bucket, int32_t reserved) {
    Request r;
    r.prompt_tokens.assign(10, 1);
    r.output_tokens.assign(static_cast<size_t>(output), 2);
    r.predicted_output_len = predicted;
    r.predicted_bucket = bucket;
    r.reserved_tokens = reserved;
    return r;
  };
  m.observe_prediction(finished(150, 200, 1, 230));  // in the predicted bucket; 71 tokens over-reserved
  m.observe_prediction(finished(250, 200, 1, 410));  // bucket 2: under-predicted; 151 over
  Request unpredicted;
  m.observe_prediction(unpredicted);
  std::string text = m.render();
  EXPECT_TRUE(has_line(text, "seer_length_predictions_total 2"));
  EXPECT_TRUE(has_line(text, "seer_length_predictions_scored_total 2"));
  EXPECT_TRUE(has_line(text, "seer_length_predictions_in_bucket_total 1"));
  EXPECT_TRUE(has_line(text, "seer_length_under_predictions_total 1"));
  EXPECT_TRUE(has_line(text, "seer_kv_reserved_requests_total 2"));
  EXPECT_TRUE(has_line(text, "seer_kv_over_reserved_tokens_total 222"));
  EXPECT_TRUE(has_line(text, "seer_length_prediction_error_tokens_count 2"));
  EXPECT_TRUE(has_line(text, "seer_length_prediction_error_tokens_sum 100"));
}

}  // namespace
}  // namespace seer::server
