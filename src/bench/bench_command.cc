#include "bench/bench_command.h"

#include <cmath>
#include <cstdio>
#include <fstream>

#include <httplib.h>

#include "bench/bench_report.h"
#include "bench/load_runner.h"
#include "bench/server_metrics_probe.h"
#include "bench/workload.h"
#include "common/error.h"
#include "common/progress.h"
#include "sim/trace_generator.h"

namespace seer::bench {

namespace {

std::optional<double> parse_rate(const std::string& s) {
  if (s.empty()) return std::nullopt;
  if (s == "inf") return INFINITY;
  char* end = nullptr;
  double r = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0' || !(r > 0)) fail("--rate must be a positive number or inf, got '{}'", s);
  return r;
}

std::vector<TraceEntry> load_entries(const BenchCommandOptions& o, const std::optional<double>& rate, bool& generated) {
  if (o.trace.empty() == o.dataset.empty()) fail("give exactly one of --trace FILE or --dataset NAME");
  generated = false;
  if (!o.trace.empty()) return read_trace(o.trace);
  TraceGeneratorOptions g;
  g.num = o.num.value_or(100);
  g.lengths = o.dataset;
  g.data_dir = o.data_dir;
  g.seed = o.seed;
  g.slo = o.slo;
  // Finite rates shape the arrivals here; without one, the dataset's own times are
  // kept where it has them, else everything is sent at once.
  const bool timed = o.dataset == "splitwise-conv" || o.dataset == "splitwise-code";
  g.arrivals.rate = rate && std::isfinite(*rate) ? *rate : (timed && !rate ? 0.0 : 1.0);
  if (o.burstiness) {
    g.arrivals.process = *o.burstiness == 1.0 ? ArrivalProcess::Poisson : ArrivalProcess::Gamma;
    g.arrivals.burstiness = *o.burstiness;
  }
  generated = true;
  return generate_trace(g);
}

}  // namespace

std::string first_model(const ServerUrl& url, const std::string& api_key) {
  httplib::Client cli(url.scheme_host_port);
  cli.set_connection_timeout(5, 0);
  cli.set_read_timeout(10, 0);
  httplib::Headers h;
  if (!api_key.empty()) h.emplace("Authorization", "Bearer " + api_key);
  auto res = cli.Get((url.prefix + "/v1/models").c_str(), h);
  if (!res) fail("cannot reach {}: {}", url.scheme_host_port, httplib::to_string(res.error()));
  if (res->status != 200) return "";
  auto j = nlohmann::json::parse(res->body, nullptr, false);
  if (j.is_discarded() || !j.contains("data") || !j["data"].is_array() || j["data"].empty()) return "";
  const auto& m = j["data"][0];
  return m.contains("id") && m["id"].is_string() ? m["id"].get<std::string>() : "";
}

int run_bench(const BenchCommandOptions& o) {
  const ServerUrl url = parse_server_url(o.url);
  if (o.endpoint != "completions" && o.endpoint != "chat")
    fail("--endpoint must be completions or chat, got '{}'", o.endpoint);
  if (o.stateful && !o.multi_turn) fail("--stateful needs --multi-turn");
  if (o.max_concurrency < 0) fail("--max-concurrency must be >= 0");
  const std::optional<double> rate = parse_rate(o.rate);

  bool generated = false;
  std::vector<TraceEntry> entries = load_entries(o, rate, generated);
  for (auto& e : entries)
    if (e.slo.ttft_s <= 0 && e.slo.tbt_s <= 0 && e.slo.deadline_s <= 0) e.slo = o.slo;

  WorkloadOptions w;
  w.api = o.multi_turn || o.endpoint == "chat" ? Api::Chat : Api::Completions;
  w.multi_turn = o.multi_turn;
  w.num = generated ? std::nullopt : o.num;
  // A generated trace already has its arrival process; only "all at once" remains.
  if (!generated) {
    w.rate = rate;
    w.burstiness = o.burstiness;
  } else if (rate && std::isinf(*rate)) {
    w.rate = rate;
  } else if (!rate && !(o.dataset == "splitwise-conv" || o.dataset == "splitwise-code")) {
    w.rate = INFINITY;
  }
  w.think_time_s = o.think_time_s;
  w.token_id_max = o.token_id_max;
  w.seed = o.seed;
  std::vector<BenchSession> sessions = build_sessions(std::move(entries), w);

  RunnerOptions r;
  r.url = url;
  r.api = w.api;
  r.api_key = o.api_key;
  r.model = o.model.empty() ? first_model(url, o.api_key) : o.model;
  r.max_concurrency = o.max_concurrency;
  r.stateful = o.stateful;
  r.temperature = o.temperature;
  r.timeout_s = o.timeout_s;

  ServerMetricsProbe probe(url);
  const bool seer_server = probe.start();
  WallClock clock;
  const int64_t total = count_turns(sessions);
  ProgressBar bar("bench", total, o.progress);
  std::vector<TurnResult> results = run_sessions(sessions, r, clock, [&](int64_t done, int64_t) { bar.update(done); });
  bar.finish();
  ServerSide server = probe.finish();

  std::string label = !o.label.empty() ? o.label : (seer_server && !probe.policy().empty() ? probe.policy() : "bench");
  BenchSummary summary = summarize_bench(results, label, o.slo, server);
  if (o.json) std::printf("%s\n", bench_json(summary).dump(2).c_str());
  else std::printf("%s", bench_table(summary).c_str());
  if (o.json)
    for (const auto& e : summary.errors) std::fprintf(stderr, "seer bench: error: %s\n", e.c_str());
  if (!o.plot.empty()) {
    std::ofstream out(o.plot);
    if (!out) fail("cannot write --plot {}", o.plot);
    out << bench_plot_svg(results, fmt::format("seer bench: {} ({})", label, o.url));
  }
  if (summary.summary.requests == 0) {
    std::fprintf(stderr, "seer bench: every request failed\n");
    return 1;
  }
  return 0;
}

}  // namespace seer::bench
