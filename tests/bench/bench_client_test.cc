// The pieces of `seer bench` that need no server: SSE parsing, stream-event folding,
// URL parsing, workload building, report and Prometheus parsing.
#include <cmath>

#include <gtest/gtest.h>

#include "bench/bench_report.h"
#include "bench/server_metrics_probe.h"
#include "bench/sse_parser.h"
#include "bench/streaming_client.h"
#include "bench/workload.h"
#include "common/error.h"

namespace seer::bench {
namespace {

TEST(SseParser, SplitsEventsAcrossArbitraryPieces) {
  std::string stream = "data: {\"a\":1}\n\n: comment\n\ndata: x\r\ndata: y\r\n\r\nevent: e\ndata: [DONE]\n\n";
  for (size_t piece = 1; piece <= stream.size(); ++piece) {
    SseParser p;
    std::vector<std::string> events;
    for (size_t i = 0; i < stream.size(); i += piece)
      for (auto& e : p.feed(std::string_view(stream).substr(i, piece))) events.push_back(e);
    ASSERT_EQ(events.size(), 3u) << "piece " << piece;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "x\ny");
    EXPECT_EQ(events[2], "[DONE]");
  }
}

TEST(SseParser, IncompleteEventIsNotReported) {
  SseParser p;
  EXPECT_TRUE(p.feed("data: partial\n").empty());
  EXPECT_GT(p.buffered(), 0u);
  EXPECT_EQ(p.feed("\n").size(), 1u);
}

TEST(StreamEvents, CompletionAndChatChunksAreFolded) {
  ClientResult r;
  EXPECT_TRUE(apply_stream_event(R"({"choices":[{"text":"Hel","finish_reason":null}]})", Api::Completions, 1.0, r));
  EXPECT_TRUE(apply_stream_event(R"({"choices":[{"text":"","finish_reason":null}]})", Api::Completions, 1.5, r));
  EXPECT_TRUE(apply_stream_event(R"({"choices":[{"text":"lo","finish_reason":"length"}]})", Api::Completions, 2.0, r));
  EXPECT_TRUE(apply_stream_event(R"({"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}})",
                                 Api::Completions, 2.1, r));
  EXPECT_FALSE(apply_stream_event("[DONE]", Api::Completions, 2.2, r));
  EXPECT_EQ(r.text, "Hello");
  EXPECT_DOUBLE_EQ(r.first_token_s, 1.0);
  EXPECT_EQ(r.chunk_times_s, (std::vector<double>{1.0, 2.0}));  // empty chunks are not tokens
  EXPECT_EQ(r.finish_reason, "length");
  EXPECT_EQ(r.prompt_tokens, 3);
  EXPECT_EQ(r.completion_tokens, 2);
  EXPECT_TRUE(r.error.empty());

  ClientResult c;
  apply_stream_event(R"({"choices":[{"delta":{"role":"assistant","content":""}}]})", Api::Chat, 1, c);
  apply_stream_event(R"({"choices":[{"delta":{"content":"Hi"}}]})", Api::Chat, 2, c);
  EXPECT_EQ(c.text, "Hi");
  EXPECT_DOUBLE_EQ(c.first_token_s, 2);
}

// Chunks read at once share one arrival time: the client cannot time their tokens
// apart, so they are one delivery, not TBT samples of 0.
TEST(StreamEvents, ChunksReadTogetherAreOneDelivery) {
  ClientResult r;
  apply_stream_event(R"({"choices":[{"text":"a"}]})", Api::Completions, 1.0, r);
  apply_stream_event(R"({"choices":[{"text":"b"}]})", Api::Completions, 1.0, r);
  apply_stream_event(R"({"choices":[{"text":"c"}]})", Api::Completions, 1.25, r);
  EXPECT_EQ(r.text, "abc");
  EXPECT_EQ(r.chunk_times_s, (std::vector<double>{1.0, 1.25}));
  EXPECT_EQ(r.text_chunks, 3);
}

TEST(StreamEvents, ErrorsAndGarbageAreReported) {
  ClientResult r;
  apply_stream_event(R"({"error":{"message":"boom","type":"server_error"}})", Api::Completions, 1, r);
  EXPECT_EQ(r.error, "boom");
  ClientResult g;
  apply_stream_event("not json", Api::Completions, 1, g);
  EXPECT_FALSE(g.error.empty());
}

TEST(ServerUrl, Forms) {
  auto a = parse_server_url("http://127.0.0.1:8080");
  EXPECT_EQ(a.scheme_host_port, "http://127.0.0.1:8080");
  EXPECT_EQ(a.prefix, "");
  EXPECT_EQ(parse_server_url("http://h:1/v1/").prefix, "");
  EXPECT_EQ(parse_server_url("http://h:1/proxy/v1").prefix, "/proxy");
  EXPECT_THROW(parse_server_url("127.0.0.1:8080"), Error);
  EXPECT_THROW(parse_server_url("ftp://x"), Error);
}

TEST(RequestBody, ForcesTheOutputLength) {
  ClientRequest r;
  r.model = "m";
  r.prompt = std::vector<int32_t>{1, 2};
  r.max_tokens = 7;
  r.conversation = "c1";
  auto b = request_body(r);
  EXPECT_EQ(b["max_tokens"], 7);
  EXPECT_EQ(b["ignore_eos"], true);
  EXPECT_EQ(b["stream"], true);
  EXPECT_EQ(b["stream_options"]["include_usage"], true);
  EXPECT_EQ(b["prompt"], nlohmann::json::array({1, 2}));
  EXPECT_EQ(b["conversation"], "c1");
  r.api = Api::Chat;
  r.messages = {{"user", "hi"}};
  auto c = request_body(r);
  EXPECT_EQ(c["messages"][0]["content"], "hi");
  EXPECT_FALSE(c.contains("prompt"));
}

std::vector<TraceEntry> small_trace() {
  std::vector<TraceEntry> t;
  for (int i = 0; i < 4; ++i) {
    TraceEntry e;
    e.id = "r" + std::to_string(i);
    e.arrival_s = 10.0 + i;
    e.prompt_tokens = 5 + i;
    e.output_tokens = 3;
    t.push_back(e);
  }
  return t;
}

TEST(Workload, SingleTurnKeepsTimesFromZeroAndMakesTokenPrompts) {
  WorkloadOptions o;
  auto s = build_sessions(small_trace(), o);
  ASSERT_EQ(s.size(), 4u);
  EXPECT_DOUBLE_EQ(s[0].start_s, 0);
  EXPECT_DOUBLE_EQ(s[3].start_s, 3);
  EXPECT_EQ(s[2].turns[0].prompt_ids.size(), 7u);
  for (int32_t id : s[2].turns[0].prompt_ids) {
    EXPECT_GE(id, o.token_id_min);
    EXPECT_LT(id, o.token_id_max);
  }
  EXPECT_EQ(s[0].turns[0].output_tokens, 3);
}

TEST(Workload, RateRescalesAndInfinitySendsAtOnce) {
  WorkloadOptions o;
  o.rate = 3.0;
  auto s = build_sessions(small_trace(), o);
  EXPECT_NEAR(s[3].start_s, 1.0, 1e-9);  // 3 gaps at 3/s
  o.rate = INFINITY;
  for (const auto& x : build_sessions(small_trace(), o)) EXPECT_EQ(x.start_s, 0);
  o.rate = 2.0;
  o.burstiness = 0.5;
  o.num = 3;
  auto g = build_sessions(small_trace(), o);
  ASSERT_EQ(g.size(), 3u);
  EXPECT_TRUE(g[0].start_s <= g[1].start_s && g[1].start_s <= g[2].start_s);
}

TEST(Workload, MultiTurnGroupsConversationsInTurnOrder) {
  std::vector<TraceEntry> t;
  auto add = [&](const char* conv, int turn, double at, const char* prompt) {
    TraceEntry e;
    e.id = std::string(conv) + std::to_string(turn);
    e.conversation = conv;
    e.turn = turn;
    e.arrival_s = at;
    e.prompt = prompt;
    e.output_tokens = 2;
    e.think_s = turn ? 5 : -1;
    t.push_back(e);
  };
  add("b", 0, 1, "b0");
  add("a", 1, 9, "a1");
  add("a", 0, 0, "a0");
  add("b", 1, 8, "b1");
  WorkloadOptions o;
  o.api = Api::Chat;
  o.multi_turn = true;
  auto s = build_sessions(t, o);
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].conversation, "a");
  EXPECT_EQ(s[0].turns[0].prompt_text, "a0");
  EXPECT_EQ(s[0].turns[1].prompt_text, "a1");
  EXPECT_DOUBLE_EQ(s[0].turns[1].think_s, 5);
  EXPECT_DOUBLE_EQ(s[1].start_s, 1);
  o.think_time_s = 0.25;
  EXPECT_DOUBLE_EQ(build_sessions(t, o)[0].turns[1].think_s, 0.25);
}

TEST(Workload, BadOptionsNameTheFlag) {
  WorkloadOptions o;
  o.burstiness = 2;
  EXPECT_THROW(build_sessions(small_trace(), o), Error);
  WorkloadOptions z;
  z.num = 0;
  EXPECT_THROW(build_sessions(small_trace(), z), Error);
  EXPECT_THROW(build_sessions({}, WorkloadOptions{}), Error);
}

TEST(Workload, SyntheticTextHasTheWordCount) {
  std::string t = synthetic_text(10, 1);
  EXPECT_EQ(std::count(t.begin(), t.end(), ' '), 9);
  EXPECT_EQ(t, synthetic_text(10, 1));
}

TurnResult ok_turn(double send, std::vector<double> chunks, int32_t out_tokens, Slo slo = {}) {
  TurnResult t;
  t.expected_output_tokens = out_tokens;
  t.prompt_tokens_estimate = 4;
  t.slo = slo;
  t.result.ok = true;
  t.result.send_s = send;
  t.result.first_token_s = chunks.front();
  t.result.chunk_times_s = chunks;
  t.result.finish_s = chunks.back();
  t.result.completion_tokens = out_tokens;
  t.result.prompt_tokens = 4;
  return t;
}

TEST(BenchReport, SummaryUsesSimKeysAndCountsFailures) {
  std::vector<TurnResult> rs;
  rs.push_back(ok_turn(0, {0.5, 0.6, 0.7}, 3, Slo{1, 0, 0}));
  rs.push_back(ok_turn(1, {2.5, 2.6, 2.8}, 3, Slo{1, 0, 0}));
  TurnResult failed;
  failed.result.error = "HTTP 500: x";
  failed.slo = Slo{1, 0, 0};
  rs.push_back(failed);
  BenchSummary b = summarize_bench(rs, "vllm", {}, {});
  EXPECT_EQ(b.summary.requests, 2);
  EXPECT_EQ(b.failed, 1);
  EXPECT_EQ(b.sent, 3);
  ASSERT_TRUE(b.slo_attainment);
  EXPECT_NEAR(*b.slo_attainment, 1.0 / 3.0, 1e-12);  // TTFTs 0.5 (met), 1.5 (missed), failure
  EXPECT_NEAR(b.summary.ttft_s.mean, 1.0, 1e-12);
  EXPECT_NEAR(b.summary.duration_s, 2.8, 1e-12);
  auto j = bench_json(b);
  std::vector<std::string> keys;
  for (auto it = j.begin(); it != j.end(); ++it) keys.push_back(it.key());
  std::vector<std::string> want = {"policy", "requests", "duration_s", "throughput", "ttft_s", "tbt_s", "e2e_s",
                                   "normalized_latency_s", "batch_size", "tokens_per_iteration", "kv_utilization",
                                   "preemptions", "allocation_failures", "swapped_bytes", "recomputed_tokens",
                                   "scheduler_time_per_iteration_s", "slo_attainment", "failed_requests"};
  EXPECT_EQ(keys, want);
  EXPECT_EQ(j["policy"], "vllm");
  EXPECT_NE(bench_table(b).find("HTTP 500: x"), std::string::npos);
  EXPECT_NE(bench_plot_svg(rs, "t").find("<svg"), std::string::npos);
}

// A request whose whole output arrived in one read adds no TBT sample; one read
// apart by 0.5 s adds exactly that. Without usage the output length is the number
// of text chunks, not of reads.
TEST(BenchReport, OneDeliveryAddsNoTbtSample) {
  std::vector<TurnResult> rs;
  TurnResult burst;
  burst.result.ok = true;
  for (const char* text : {"x", "y", "z"})
    apply_stream_event(std::string(R"({"choices":[{"text":")") + text + R"("}]})", Api::Completions, 1.0,
                       burst.result);
  burst.result.finish_s = 1.0;
  rs.push_back(burst);
  rs.push_back(ok_turn(0, {2.0, 2.5}, 2, Slo{}));
  BenchSummary b = summarize_bench(rs, "t", {}, {});
  EXPECT_DOUBLE_EQ(b.summary.tbt_s.mean, 0.5);
  EXPECT_DOUBLE_EQ(b.summary.tbt_s.p50, 0.5);
  EXPECT_DOUBLE_EQ(b.summary.output_tokens_per_s * b.summary.duration_s, 3 + 2);
}

TEST(Prometheus, ParsesSeriesAndHistogramDeltas) {
  auto before = parse_prometheus_text(
      "# HELP h H.\n# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_bucket{le=\"2\"} 1\nh_bucket{le=\"+Inf\"} 1\n"
      "h_sum 0.5\nh_count 1\nseer_info{model=\"m\",policy=\"sarathi\"} 1\n");
  auto after = parse_prometheus_text(
      "h_bucket{le=\"1\"} 3\nh_bucket{le=\"2\"} 5\nh_bucket{le=\"+Inf\"} 5\nh_sum 6.5\nh_count 5\n");
  EXPECT_EQ(before.at("seer_info{model=\"m\",policy=\"sarathi\"}"), 1);
  HistogramDelta d = histogram_delta(before, after, "h");
  ASSERT_EQ(d.buckets.size(), 3u);
  EXPECT_EQ(d.count, 4);
  EXPECT_EQ(d.sum, 6);
  EXPECT_EQ(histogram_max_bound(d), 2);
  EXPECT_NEAR(histogram_quantile(d, 0.5), 1.0, 1e-12);   // 2 of 4 in (0, 1]
  EXPECT_NEAR(histogram_quantile(d, 0.75), 1.5, 1e-12);  // halfway through (1, 2]
}

TEST(Prometheus, ReplicaLabelledSeriesAreReadAsTheirSum) {
  // seer serve --replica-name puts {replica="..."} on every series, wherever the
  // own labels are; the probe reads them as the unlabelled / own-labelled series.
  auto m = parse_prometheus_text(
      "seer_preemptions_total{replica=\"r1\"} 3\nseer_preemptions_total{replica=\"r2\"} 4\n"
      "seer_cache_hit_tokens_total{tier=\"device\",replica=\"r1\"} 10\n"
      "h_bucket{replica=\"r1\",le=\"1\"} 2\nh_bucket{replica=\"r1\",le=\"+Inf\"} 3\n"
      "h_sum{replica=\"r1\"} 1.5\nh_count{replica=\"r1\"} 3\n"
      "seer_info{model=\"a\\\"b\",replica=\"r,1\",policy=\"sarathi\"} 1\n");
  EXPECT_EQ(m.at("seer_preemptions_total"), 7);
  EXPECT_EQ(m.at("seer_cache_hit_tokens_total{tier=\"device\"}"), 10);
  EXPECT_EQ(m.at("seer_info{model=\"a\\\"b\",policy=\"sarathi\"}"), 1);
  HistogramDelta d = histogram_delta({}, m, "h");
  ASSERT_EQ(d.buckets.size(), 2u);
  EXPECT_EQ(d.count, 3);
  EXPECT_EQ(d.sum, 1.5);
  EXPECT_EQ(without_label("x{le=\"1\"}", "replica"), "x{le=\"1\"}");
  EXPECT_EQ(without_label("x", "replica"), "x");
}

// The server's cache counters become bench JSON's `cache` object, with the keys and
// definitions of `seer sim --json` (recomputed: history tokens not reused).
TEST(Prometheus, CacheCountersBecomeTheCacheObject) {
  auto before = parse_prometheus_text(
      "seer_cache_hit_tokens_total{tier=\"device\"} 100\nseer_cache_hit_tokens_total{tier=\"host\"} 10\n"
      "seer_cache_history_tokens_total 150\nseer_cache_recomputed_tokens_total 40\n"
      "seer_cache_dropped_tokens_total 5\nseer_cache_swapped_bytes_total{direction=\"out\"} 1000\n"
      "seer_cache_swapped_bytes_total{direction=\"in\"} 200\nseer_prompt_tokens_total 300\n");
  auto after = parse_prometheus_text(
      "seer_cache_hit_tokens_total{tier=\"device\"} 400\nseer_cache_hit_tokens_total{tier=\"host\"} 60\n"
      "seer_cache_history_tokens_total 650\nseer_cache_recomputed_tokens_total 80\n"
      "seer_cache_dropped_tokens_total 25\nseer_cache_swapped_bytes_total{direction=\"out\"} 5000\n"
      "seer_cache_swapped_bytes_total{direction=\"in\"} 1200\nseer_prompt_tokens_total 1000\n");
  std::optional<CacheCounters> c = cache_delta(before, after);
  ASSERT_TRUE(c.has_value());
  EXPECT_EQ(c->hit_tokens_device, 300);
  EXPECT_EQ(c->hit_tokens_host, 50);
  EXPECT_EQ(c->history_tokens, 500);
  EXPECT_EQ(c->recomputed_tokens, 40);
  EXPECT_EQ(c->dropped_tokens, 20);
  EXPECT_EQ(c->swapped_out_bytes, 4000);
  EXPECT_EQ(c->swapped_in_bytes, 1000);
  EXPECT_DOUBLE_EQ(c->hit_rate(), 350.0 / 700.0);

  std::vector<TurnResult> rs;
  rs.push_back(ok_turn(0, {0.5, 0.6}, 2, Slo{}));
  ServerSide server;
  server.known = true;
  server.cache = c;
  auto j = bench_json(summarize_bench(rs, "pensieve", {}, server));
  ASSERT_TRUE(j.contains("cache")) << j.dump();
  for (const char* k : {"hit_tokens_device", "hit_tokens_host", "recomputed_tokens", "dropped_tokens",
                        "swapped_out_bytes", "swapped_in_bytes", "hit_rate"})
    EXPECT_TRUE(j["cache"].contains(k)) << k;
  EXPECT_EQ(j["cache"]["recomputed_tokens"], 40);
  EXPECT_DOUBLE_EQ(j["cache"]["hit_rate"].get<double>(), 0.5);
  // A server without a conversation cache has no cache object.
  EXPECT_FALSE(cache_delta({}, parse_prometheus_text("seer_prompt_tokens_total 3\n")).has_value());
}

TEST(Prometheus, PredictionCountersBecomeThePredictionsObject) {
  auto before = parse_prometheus_text(
      "seer_length_predictions_total 5\nseer_length_predictions_scored_total 5\n"
      "seer_length_predictions_in_bucket_total 2\nseer_length_under_predictions_total 1\n"
      "seer_kv_reserved_requests_total 5\nseer_kv_over_reserved_tokens_total 500\n"
      "seer_reservation_growths_total 1\nseer_supervisor_preemptions_total 0\nseer_predictor_retrainings_total 0\n");
  auto after = parse_prometheus_text(
      "seer_length_predictions_total 9\nseer_length_predictions_scored_total 9\n"
      "seer_length_predictions_in_bucket_total 5\nseer_length_under_predictions_total 2\n"
      "seer_kv_reserved_requests_total 9\nseer_kv_over_reserved_tokens_total 700\n"
      "seer_reservation_growths_total 4\nseer_supervisor_preemptions_total 1\nseer_predictor_retrainings_total 2\n");
  std::optional<PredictionSummary> p = prediction_delta(before, after);
  ASSERT_TRUE(p.has_value());
  EXPECT_DOUBLE_EQ(p->accuracy.value_or(-1), 3.0 / 4.0);
  EXPECT_EQ(p->under_predictions, 1);
  EXPECT_DOUBLE_EQ(p->over_reserved_tokens_mean, 200.0 / 4.0);
  EXPECT_EQ(p->reservation_growths, 3);
  EXPECT_EQ(p->supervisor_preemptions, 1);
  EXPECT_EQ(p->retrainings, 2);
  // A server without a length predictor has no prediction counters.
  EXPECT_FALSE(prediction_delta({}, parse_prometheus_text("seer_preemptions_total 3\n")).has_value());
}

}  // namespace
}  // namespace seer::bench
