#include "sim/metrics_summary.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace seer {
namespace {

MeanMax mean_max(const std::vector<double>& v) {
  MeanMax m;
  if (v.empty()) return m;
  double sum = 0;
  m.max = -std::numeric_limits<double>::infinity();
  for (double x : v) {
    sum += x;
    m.max = std::max(m.max, x);
  }
  m.mean = sum / static_cast<double>(v.size());
  return m;
}

nlohmann::ordered_json dist_json(const Distribution& d) {
  return {{"mean", d.mean}, {"p50", d.p50}, {"p90", d.p90}, {"p99", d.p99}, {"max", d.max}};
}

nlohmann::ordered_json mm_json(const MeanMax& m) { return {{"mean", m.mean}, {"max", m.max}}; }

double sorted_percentile(const std::vector<double>& values, double p) {
  double pos = std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  double frac = pos - static_cast<double>(lo);
  return values[lo] + (values[hi] - values[lo]) * frac;
}

}  // namespace

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  return sorted_percentile(values, p);
}

Distribution distribution(const std::vector<double>& values) {
  Distribution d;
  if (values.empty()) return d;
  MeanMax mm = mean_max(values);
  d.mean = mm.mean;
  d.max = mm.max;
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  d.p50 = sorted_percentile(sorted, 50);
  d.p90 = sorted_percentile(sorted, 90);
  d.p99 = sorted_percentile(sorted, 99);
  return d;
}

MetricsSummary summarize(const std::string& policy, const std::vector<RequestRecord>& requests,
                         const std::vector<IterationRecord>& iterations, const RunTotals& totals) {
  MetricsSummary s;
  s.policy = policy;
  s.requests = static_cast<int64_t>(requests.size());
  s.totals = totals;

  std::vector<double> ttft, tbt, e2e, norm, delay;
  double first_arrival = std::numeric_limits<double>::infinity();
  double last_finish = -std::numeric_limits<double>::infinity();
  double out_tokens = 0, all_tokens = 0;
  for (const auto& r : requests) {
    first_arrival = std::min(first_arrival, r.arrival_s);
    out_tokens += r.output_tokens;
    all_tokens += r.output_tokens + r.prompt_tokens;
    if (r.first_token_s >= 0) ttft.push_back(r.first_token_s - r.arrival_s);
    if (r.first_scheduled_s >= 0) delay.push_back(r.first_scheduled_s - r.arrival_s);
    for (size_t i = 1; i < r.token_times_s.size(); ++i) tbt.push_back(r.token_times_s[i] - r.token_times_s[i - 1]);
    if (r.finish_s >= 0) {
      last_finish = std::max(last_finish, r.finish_s);
      e2e.push_back(r.finish_s - r.arrival_s);
      if (r.output_tokens > 0) norm.push_back((r.finish_s - r.arrival_s) / r.output_tokens);
    }
  }
  if (!requests.empty() && last_finish > first_arrival) s.duration_s = last_finish - first_arrival;
  if (s.duration_s > 0) {
    s.requests_per_s = static_cast<double>(s.requests) / s.duration_s;
    s.output_tokens_per_s = out_tokens / s.duration_s;
    s.total_tokens_per_s = all_tokens / s.duration_s;
  }
  s.ttft_s = distribution(ttft);
  s.tbt_s = distribution(tbt);
  s.e2e_s = distribution(e2e);
  s.normalized_latency_s = distribution(norm);
  s.scheduling_delay_p50_s = percentile(delay, 50);

  std::vector<double> batch, tokens, kv, sched;
  for (const auto& it : iterations) {
    if (it.idle) continue;
    batch.push_back(it.batch_size);
    tokens.push_back(it.num_tokens);
    kv.push_back(it.kv_utilization);
    sched.push_back(it.scheduler_time_s);
  }
  s.batch_size = mean_max(batch);
  s.tokens_per_iteration = mean_max(tokens);
  s.kv_utilization = mean_max(kv);
  s.scheduler_time_mean_s = mean_max(sched).mean;
  s.scheduler_time_p99_s = percentile(sched, 99);
  return s;
}

nlohmann::ordered_json summary_json(const MetricsSummary& s) {
  nlohmann::ordered_json j;
  j["policy"] = s.policy;
  j["requests"] = s.requests;
  j["duration_s"] = s.duration_s;
  j["throughput"] = {{"requests_per_s", s.requests_per_s},
                     {"output_tokens_per_s", s.output_tokens_per_s},
                     {"total_tokens_per_s", s.total_tokens_per_s}};
  j["ttft_s"] = dist_json(s.ttft_s);
  j["tbt_s"] = dist_json(s.tbt_s);
  j["e2e_s"] = dist_json(s.e2e_s);
  j["normalized_latency_s"] = dist_json(s.normalized_latency_s);
  j["batch_size"] = mm_json(s.batch_size);
  j["tokens_per_iteration"] = mm_json(s.tokens_per_iteration);
  j["kv_utilization"] = mm_json(s.kv_utilization);
  j["preemptions"] = s.totals.preemptions;
  j["allocation_failures"] = s.totals.allocation_failures;
  j["swapped_bytes"] = s.totals.swapped_bytes;
  j["recomputed_tokens"] = s.totals.recomputed_tokens;
  j["scheduler_time_per_iteration_s"] = {{"mean", s.scheduler_time_mean_s}, {"p99", s.scheduler_time_p99_s}};
  if (s.predictions) j["predictions"] = predictions_json(*s.predictions);
  if (s.cache) j["cache"] = cache_json(*s.cache);
  if (s.speculation) j["speculation"] = speculation_json(*s.speculation);
  return j;
}

nlohmann::ordered_json speculation_json(const SpeculationCounts& c) {
  nlohmann::ordered_json j;
  j["verify_steps"] = c.verify_steps;
  j["draft_tokens"] = c.draft_tokens;
  j["accepted_tokens"] = c.accepted_tokens;
  j["acceptance_rate"] = c.draft_tokens > 0 ? static_cast<double>(c.accepted_tokens) / c.draft_tokens : 0.0;
  j["tokens_per_step"] = c.verify_steps > 0 ? 1.0 + static_cast<double>(c.accepted_tokens) / c.verify_steps : 0.0;
  j["pauses"] = c.pauses;
  j["paused_steps"] = c.paused_steps;
  return j;
}

nlohmann::ordered_json predictions_json(const PredictionSummary& p) {
  nlohmann::ordered_json j;
  j["accuracy"] = p.accuracy ? nlohmann::ordered_json(*p.accuracy) : nlohmann::ordered_json(nullptr);
  j["under_predictions"] = p.under_predictions;
  j["over_reserved_tokens_mean"] = p.over_reserved_tokens_mean;
  j["reservation_growths"] = p.reservation_growths;
  j["supervisor_preemptions"] = p.supervisor_preemptions;
  j["retrainings"] = p.retrainings;
  return j;
}

nlohmann::ordered_json cache_json(const CacheCounters& c) {
  nlohmann::ordered_json j;
  j["hit_tokens_device"] = c.hit_tokens_device;
  j["hit_tokens_host"] = c.hit_tokens_host;
  j["recomputed_tokens"] = c.recomputed_tokens;
  j["dropped_tokens"] = c.dropped_tokens;
  j["swapped_out_bytes"] = c.swapped_out_bytes;
  j["swapped_in_bytes"] = c.swapped_in_bytes;
  j["hit_rate"] = c.hit_rate();
  j["prompt_tokens"] = c.lookup_tokens;  // the hit rate's denominator
  return j;
}

std::optional<double> slo_attainment(const std::vector<RequestRecord>& requests, const Slo& fallback) {
  int64_t counted = 0, met = 0;
  for (const auto& r : requests) {
    Slo slo{r.slo.ttft_s > 0 ? r.slo.ttft_s : fallback.ttft_s, r.slo.tbt_s > 0 ? r.slo.tbt_s : fallback.tbt_s,
            r.slo.deadline_s > 0 ? r.slo.deadline_s : fallback.deadline_s};
    if (slo.ttft_s <= 0 && slo.tbt_s <= 0 && slo.deadline_s <= 0) continue;
    ++counted;
    bool ok = true;
    if (slo.ttft_s > 0) ok &= r.first_token_s >= 0 && r.first_token_s - r.arrival_s <= slo.ttft_s;
    if (slo.tbt_s > 0)
      for (size_t i = 1; i < r.token_times_s.size(); ++i) ok &= r.token_times_s[i] - r.token_times_s[i - 1] <= slo.tbt_s;
    if (slo.deadline_s > 0) ok &= r.finish_s >= 0 && r.finish_s - r.arrival_s <= slo.deadline_s;
    met += ok ? 1 : 0;
  }
  if (counted == 0) return std::nullopt;
  return static_cast<double>(met) / static_cast<double>(counted);
}

}  // namespace seer

namespace seer {

std::map<std::string, double> slo_attainment_by_class(const std::vector<RequestRecord>& requests) {
  std::map<std::string, std::vector<RequestRecord>> by_class;
  for (const auto& r : requests)
    if (!r.workload_class.empty()) by_class[r.workload_class].push_back(r);
  std::map<std::string, double> out;
  for (const auto& [name, records] : by_class)
    if (auto a = slo_attainment(records)) out[name] = *a;
  return out;
}

}  // namespace seer
