#include "bench/bench_report.h"

#include <algorithm>

#include <fmt/format.h>

#include "sim/svg_plot.h"

namespace seer::bench {

std::vector<RequestRecord> request_records(const std::vector<TurnResult>& results) {
  std::vector<RequestRecord> out;
  for (const auto& t : results) {
    const ClientResult& c = t.result;
    if (!c.ok) continue;
    RequestRecord r;
    r.arrival_s = c.send_s;
    r.first_token_s = c.first_token_s;
    r.token_times_s = c.chunk_times_s;
    r.finish_s = c.finish_s;
    r.prompt_tokens = c.prompt_tokens >= 0 ? c.prompt_tokens : t.prompt_tokens_estimate;
    r.output_tokens = c.completion_tokens >= 0 ? c.completion_tokens : c.text_chunks;
    r.slo = t.slo;
    out.push_back(std::move(r));
  }
  return out;
}

BenchSummary summarize_bench(const std::vector<TurnResult>& results, const std::string& label,
                             const Slo& fallback_slo, const ServerSide& server) {
  BenchSummary b;
  std::vector<RequestRecord> records = request_records(results);
  b.summary = summarize(label, records, {}, server.totals);
  if (server.known) {
    b.summary.batch_size = server.batch_size;
    b.summary.tokens_per_iteration = server.tokens_per_iteration;
    b.summary.kv_utilization = server.kv_utilization;
    b.summary.scheduler_time_mean_s = server.scheduler_time_mean_s;
    b.summary.scheduler_time_p99_s = server.scheduler_time_p99_s;
    b.summary.cache = server.cache;
    b.summary.predictions = server.predictions;
    b.summary.speculation = server.speculation;
  }
  // A failed (or never sent) request misses its SLO: it counts with an empty record.
  std::vector<RequestRecord> with_failures = records;
  for (const auto& t : results) {
    if (!t.skipped) ++b.sent;
    if (t.result.ok) {
      if (t.result.completion_tokens >= 0 && t.result.completion_tokens < t.expected_output_tokens) ++b.short_outputs;
      continue;
    }
    ++b.failed;
    RequestRecord r;
    r.slo = t.slo;
    with_failures.push_back(r);
    if (b.errors.size() < 5 && std::find(b.errors.begin(), b.errors.end(), t.result.error) == b.errors.end())
      b.errors.push_back(t.result.error);
  }
  b.slo_attainment = slo_attainment(with_failures, fallback_slo);
  return b;
}

nlohmann::ordered_json bench_json(const BenchSummary& b) {
  nlohmann::ordered_json j = summary_json(b.summary);
  j["slo_attainment"] = b.slo_attainment ? nlohmann::ordered_json(*b.slo_attainment) : nlohmann::ordered_json();
  j["failed_requests"] = b.failed;
  return j;
}

std::string bench_table(const BenchSummary& b) {
  std::string out = render_summary_table(b.summary);
  out += fmt::format("\nrequests sent {}, failed {}", b.sent, b.failed);
  if (b.slo_attainment) out += fmt::format(", SLO attainment {:.1f}%", 100 * *b.slo_attainment);
  out += "\n";
  if (b.short_outputs > 0)
    out += fmt::format("warning: {} requests returned fewer tokens than max_tokens (does the server honour "
                       "ignore_eos?)\n",
                       b.short_outputs);
  for (const auto& e : b.errors) out += "error: " + e + "\n";
  return out;
}

namespace {

PlotSeries cdf(const std::string& name, std::vector<double> v) {
  std::sort(v.begin(), v.end());
  PlotSeries s{name, {}};
  for (size_t i = 0; i < v.size(); ++i) s.points.emplace_back(v[i], static_cast<double>(i + 1) / v.size());
  return s;
}

}  // namespace

std::string bench_plot_svg(const std::vector<TurnResult>& results, const std::string& title) {
  std::vector<double> ttft, tbt, e2e;
  for (const auto& r : request_records(results)) {
    if (r.first_token_s >= 0) ttft.push_back(r.first_token_s - r.arrival_s);
    for (size_t i = 1; i < r.token_times_s.size(); ++i) tbt.push_back(r.token_times_s[i] - r.token_times_s[i - 1]);
    e2e.push_back(r.finish_s - r.arrival_s);
  }
  auto panel = [](const char* t, const char* x, std::vector<double> v) {
    return PlotPanel{t, x, "fraction of requests", false, {cdf("measured", std::move(v))}};
  };
  return render_svg(title, {panel("TTFT", "seconds", ttft), panel("TBT", "seconds", tbt),
                            panel("end-to-end latency", "seconds", e2e)});
}

}  // namespace seer::bench
