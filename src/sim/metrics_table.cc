// Terminal rendering of a MetricsSummary (declared in metrics_summary.h).
#include <fmt/format.h>

#include "sim/metrics_summary.h"

namespace seer {
namespace {

std::string bytes_text(int64_t b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(b);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", v, units[u]);
}

void dist_row(std::string& out, const char* name, const Distribution& d) {
  out += fmt::format("  {:<22}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}{:>10.4f}\n", name, d.mean, d.p50, d.p90, d.p99,
                     d.max);
}

}  // namespace

std::string render_summary_table(const MetricsSummary& s) {
  std::string out;
  out += fmt::format("policy {}: {} requests in {:.2f} s\n", s.policy, s.requests, s.duration_s);
  out += fmt::format("throughput: {:.3f} req/s, {:.1f} output tok/s, {:.1f} total tok/s\n\n", s.requests_per_s,
                     s.output_tokens_per_s, s.total_tokens_per_s);
  out += fmt::format("  {:<22}{:>10}{:>10}{:>10}{:>10}{:>10}\n", "latency (s)", "mean", "p50", "p90", "p99", "max");
  dist_row(out, "TTFT", s.ttft_s);
  dist_row(out, "TBT", s.tbt_s);
  dist_row(out, "end-to-end", s.e2e_s);
  dist_row(out, "normalized (s/token)", s.normalized_latency_s);
  out += fmt::format("\n  {:<22}{:>10}{:>10}\n", "per iteration", "mean", "max");
  out += fmt::format("  {:<22}{:>10.2f}{:>10.0f}\n", "batch size", s.batch_size.mean, s.batch_size.max);
  out += fmt::format("  {:<22}{:>10.1f}{:>10.0f}\n", "tokens", s.tokens_per_iteration.mean, s.tokens_per_iteration.max);
  out += fmt::format("  {:<22}{:>9.1f}%{:>9.1f}%\n", "KV utilization", 100 * s.kv_utilization.mean,
                     100 * s.kv_utilization.max);
  out += fmt::format("  {:<22}{:>8.1f}us{:>6.1f}us (p99)\n", "scheduler time", 1e6 * s.scheduler_time_mean_s,
                     1e6 * s.scheduler_time_p99_s);
  out += fmt::format("\npreemptions {}, allocation failures {}, swapped {}, recomputed tokens {}\n",
                     s.totals.preemptions, s.totals.allocation_failures, bytes_text(s.totals.swapped_bytes),
                     s.totals.recomputed_tokens);
  return out;
}

}  // namespace seer
