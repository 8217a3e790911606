#include "bench/server_metrics_probe.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <sstream>

#include <httplib.h>

#include "engine/prediction_tally.h"

namespace seer::bench {

std::string without_label(const std::string& series, const std::string& label) {
  const size_t open = series.find('{');
  if (open == std::string::npos || series.back() != '}') return series;
  std::vector<std::string> kept;
  size_t i = open + 1;
  while (i < series.size() - 1) {
    const size_t eq = series.find('=', i);
    if (eq == std::string::npos || eq + 1 >= series.size() || series[eq + 1] != '"') return series;
    size_t j = eq + 2;  // the closing quote, skipping escaped characters
    while (j < series.size() && series[j] != '"') j += series[j] == '\\' ? 2 : 1;
    if (j >= series.size()) return series;
    if (series.compare(i, eq - i, label) != 0) kept.push_back(series.substr(i, j + 1 - i));
    i = j + 1;
    if (i < series.size() && series[i] == ',') ++i;
  }
  std::string out = series.substr(0, open);
  if (kept.empty()) return out;
  out += '{';
  for (size_t k = 0; k < kept.size(); ++k) out += (k ? "," : "") + kept[k];
  return out + '}';
}

std::map<std::string, double> parse_prometheus_text(const std::string& text) {
  std::map<std::string, double> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    // The series ends at the last space outside the label block.
    size_t close = line.rfind('}');
    size_t space = line.find(' ', close == std::string::npos ? 0 : close);
    if (space == std::string::npos) continue;
    std::string value = line.substr(space + 1);
    if (size_t ts = value.find(' '); ts != std::string::npos) value.resize(ts);  // optional timestamp
    double v;
    if (value == "+Inf") v = INFINITY;
    else if (value == "-Inf") v = -INFINITY;
    else if (value == "NaN") v = NAN;
    else {
      char* end = nullptr;
      v = std::strtod(value.c_str(), &end);
      if (end == value.c_str()) continue;
    }
    // Servers behind a balancer label every series with their replica (seer serve
    // --replica-name): the probe reads the sum over replicas.
    out[without_label(line.substr(0, space), "replica")] += v;
  }
  return out;
}

HistogramDelta histogram_delta(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                               const std::string& name) {
  auto get = [](const std::map<std::string, double>& m, const std::string& k) {
    auto it = m.find(k);
    return it == m.end() ? 0.0 : it->second;
  };
  HistogramDelta h;
  const std::string prefix = name + "_bucket{le=\"";
  for (auto it = after.lower_bound(prefix); it != after.end() && it->first.rfind(prefix, 0) == 0; ++it) {
    std::string le = it->first.substr(prefix.size(), it->first.size() - prefix.size() - 2);
    double bound = le == "+Inf" ? INFINITY : std::strtod(le.c_str(), nullptr);
    h.buckets.emplace_back(bound, it->second - get(before, it->first));
  }
  std::sort(h.buckets.begin(), h.buckets.end());
  h.sum = get(after, name + "_sum") - get(before, name + "_sum");
  h.count = get(after, name + "_count") - get(before, name + "_count");
  return h;
}

double histogram_quantile(const HistogramDelta& h, double q) {
  if (h.count <= 0 || h.buckets.empty()) return 0;
  const double rank = q * h.count;
  double prev_bound = 0, prev_count = 0;
  for (const auto& [bound, count] : h.buckets) {
    if (count >= rank) {
      if (std::isinf(bound)) return prev_bound;  // above the last finite bound
      if (count == prev_count) return bound;
      return prev_bound + (bound - prev_bound) * (rank - prev_count) / (count - prev_count);
    }
    prev_bound = bound;
    prev_count = count;
  }
  return prev_bound;
}

double histogram_max_bound(const HistogramDelta& h) {
  double prev_bound = 0;
  for (const auto& [bound, count] : h.buckets) {
    if (count >= h.count && h.count > 0) return std::isinf(bound) ? prev_bound : bound;
    prev_bound = bound;
  }
  return 0;
}

namespace {

int64_t counter_delta(const std::map<std::string, double>& before, const std::map<std::string, double>& after,
                      const std::string& name) {
  auto a = after.find(name), b = before.find(name);
  return static_cast<int64_t>(std::llround((a == after.end() ? 0 : a->second) - (b == before.end() ? 0 : b->second)));
}

}  // namespace

std::optional<PredictionSummary> prediction_delta(const std::map<std::string, double>& before,
                                                  const std::map<std::string, double>& after) {
  if (!after.count("seer_length_predictions_total")) return std::nullopt;
  auto delta = [&](const char* name) { return counter_delta(before, after, name); };
  PredictionCounts c;
  c.predicted = delta("seer_length_predictions_total");
  c.scored = delta("seer_length_predictions_scored_total");
  c.correct = delta("seer_length_predictions_in_bucket_total");
  c.under = delta("seer_length_under_predictions_total");
  c.reserved_requests = delta("seer_kv_reserved_requests_total");
  c.over_reserved_tokens = delta("seer_kv_over_reserved_tokens_total");
  return PredictionTally::summarize(c, delta("seer_reservation_growths_total"),
                                    delta("seer_supervisor_preemptions_total"),
                                    delta("seer_predictor_retrainings_total"));
}

std::optional<CacheCounters> cache_delta(const std::map<std::string, double>& before,
                                        const std::map<std::string, double>& after) {
  if (!after.count("seer_cache_hit_tokens_total{tier=\"device\"}")) return std::nullopt;
  auto delta = [&](const char* name) { return counter_delta(before, after, name); };
  CacheCounters c;
  c.hit_tokens_device = delta("seer_cache_hit_tokens_total{tier=\"device\"}");
  c.hit_tokens_host = delta("seer_cache_hit_tokens_total{tier=\"host\"}");
  c.history_tokens = delta("seer_cache_history_tokens_total");
  c.recomputed_tokens = delta("seer_cache_recomputed_tokens_total");
  c.dropped_tokens = delta("seer_cache_dropped_tokens_total");
  c.swapped_out_bytes = delta("seer_cache_swapped_bytes_total{direction=\"out\"}");
  c.swapped_in_bytes = delta("seer_cache_swapped_bytes_total{direction=\"in\"}");
  c.lookup_tokens = delta("seer_prompt_tokens_total");
  return c;
}

ServerMetricsProbe::ServerMetricsProbe(ServerUrl url, double sample_interval_s)
    : url_(std::move(url)), interval_s_(sample_interval_s) {}

ServerMetricsProbe::~ServerMetricsProbe() {
  stop_.store(true);
  if (sampler_.joinable()) sampler_.join();
}

bool ServerMetricsProbe::fetch(std::map<std::string, double>& out) const {
  httplib::Client cli(url_.scheme_host_port);
  cli.set_connection_timeout(5, 0);
  cli.set_read_timeout(5, 0);
  auto res = cli.Get((url_.prefix + "/metrics").c_str());
  if (!res || res->status != 200) return false;
  out = parse_prometheus_text(res->body);
  return out.count("seer_kv_utilization") != 0;
}

bool ServerMetricsProbe::start() {
  if (!fetch(before_)) return false;
  for (const auto& [series, v] : before_) {
    const std::string key = "policy=\"";
    if (series.rfind("seer_info{", 0) != 0) continue;
    if (size_t p = series.find(key); p != std::string::npos)
      policy_ = series.substr(p + key.size(), series.find('"', p + key.size()) - p - key.size());
  }
  sampler_ = std::thread([this] {
    while (!stop_.load()) {
      std::map<std::string, double> m;
      if (fetch(m)) kv_samples_.push_back(m["seer_kv_utilization"]);
      for (double waited = 0; waited < interval_s_ && !stop_.load(); waited += 0.05)
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  });
  return true;
}

ServerSide ServerMetricsProbe::finish() {
  ServerSide s;
  if (!sampler_.joinable()) return s;
  stop_.store(true);
  sampler_.join();
  std::map<std::string, double> after;
  if (!fetch(after)) return s;
  s.known = true;
  auto delta = [&](const char* name) { return counter_delta(before_, after, name); };
  s.totals.preemptions = delta("seer_preemptions_total");
  s.totals.allocation_failures = delta("seer_allocation_failures_total");
  s.totals.swapped_bytes = delta("seer_swapped_bytes_total");
  s.totals.recomputed_tokens = delta("seer_recomputed_tokens_total");
  auto mean_max = [&](const char* name) {
    HistogramDelta h = histogram_delta(before_, after, name);
    return MeanMax{h.count > 0 ? h.sum / h.count : 0, histogram_max_bound(h)};
  };
  s.cache = cache_delta(before_, after);
  s.predictions = prediction_delta(before_, after);
  if (after.count("seer_spec_verify_steps_total"))
    s.speculation = SpeculationCounts{static_cast<int64_t>(delta("seer_spec_verify_steps_total")),
                                      static_cast<int64_t>(delta("seer_spec_draft_tokens_total")),
                                      static_cast<int64_t>(delta("seer_spec_accepted_tokens_total")),
                                      static_cast<int64_t>(delta("seer_spec_pauses_total")),
                                      static_cast<int64_t>(delta("seer_spec_paused_steps_total"))};
  s.batch_size = mean_max("seer_batch_size");
  s.tokens_per_iteration = mean_max("seer_tokens_per_iteration");
  HistogramDelta sched = histogram_delta(before_, after, "seer_scheduler_time_seconds");
  s.scheduler_time_mean_s = sched.count > 0 ? sched.sum / sched.count : 0;
  s.scheduler_time_p99_s = histogram_quantile(sched, 0.99);
  if (!kv_samples_.empty()) {
    double sum = 0, mx = 0;
    for (double v : kv_samples_) {
      sum += v;
      mx = std::max(mx, v);
    }
    s.kv_utilization = {sum / kv_samples_.size(), mx};
  }
  return s;
}

}  // namespace seer::bench
