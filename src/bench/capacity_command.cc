#include "bench/capacity_command.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include <fmt/format.h>

#include "bench/bench_command.h"
#include "bench/bench_report.h"
#include "bench/load_runner.h"
#include "bench/workload.h"
#include "common/error.h"
#include "common/progress.h"

namespace seer::bench {

namespace {

struct Probe {
  CapacityCommandOptions opts;
  std::vector<TraceEntry> entries;
  RunnerOptions runner;
  std::vector<CapacityStep> steps;

  // Replays the trace at `rate` and returns the summary the bisection judges.
  MetricsSummary run(double rate) {
    WorkloadOptions w;
    w.api = runner.api;
    w.rate = rate;
    w.token_id_max = opts.token_id_max;
    // Each probe sends prompts of its own: with the same prompts, a prefix cache
    // (seer's default, llama-server's slots) would serve a probe from the one before.
    w.seed = opts.seed + steps.size();
    w.text_prompt_prefix = fmt::format("(probe {}) ", steps.size() + 1);
    std::vector<BenchSession> sessions = build_sessions(entries, w);
    WallClock clock;
    const auto t0 = std::chrono::steady_clock::now();
    ProgressBar bar(fmt::format("capacity: step {} at {:.3g} req/s", steps.size() + 1, rate), count_turns(sessions),
                    opts.progress);
    std::vector<TurnResult> results =
        run_sessions(sessions, runner, clock, [&](int64_t done, int64_t) { bar.update(done); });
    bar.finish();
    BenchSummary b = summarize_bench(results, "capacity", Slo{}, ServerSide{});
    MetricsSummary s = b.summary;
    // The client's stand-in for the scheduling delay (see capacity_command.h).
    s.scheduling_delay_p50_s = b.failed > 0 ? std::numeric_limits<double>::infinity() : s.ttft_s.p50;
    CapacityStep step;
    step.rate = rate;
    step.tbt_p99_s = s.tbt_s.p99;
    step.ttft_p50_s = s.ttft_s.p50;
    step.requests = s.requests;
    step.failed = b.failed;
    step.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    step.passed = meets_capacity_slo(s, opts.criteria);
    steps.push_back(step);
    if (!opts.json) {
      std::printf("%s", capacity_table({step}).c_str());
      std::fflush(stdout);
    }
    for (const auto& e : b.errors) std::fprintf(stderr, "seer bench capacity: error at %.3g req/s: %s\n", rate, e.c_str());
    return s;
  }
};

}  // namespace

nlohmann::ordered_json capacity_json(double capacity, const std::vector<CapacityStep>& steps) {
  nlohmann::ordered_json j;
  j["capacity_rps"] = capacity;
  j["steps"] = nlohmann::ordered_json::array();
  for (const auto& s : steps)
    j["steps"].push_back({{"rate", s.rate},
                          {"tbt_p99_s", s.tbt_p99_s},
                          {"ttft_p50_s", s.ttft_p50_s},
                          {"passed", s.passed},
                          {"requests", s.requests},
                          {"failed_requests", s.failed},
                          {"wall_s", s.wall_s}});
  return j;
}

std::string capacity_table(const std::vector<CapacityStep>& steps) {
  std::string out;
  for (const auto& s : steps)
    out += fmt::format("  rate {:8.3f} req/s  TBT p99 {:8.4f} s  TTFT p50 {:7.3f} s  {:4d} ok {:3d} failed  {:6.1f} s  {}\n",
                       s.rate, s.tbt_p99_s, s.ttft_p50_s, s.requests, s.failed, s.wall_s, s.passed ? "passed" : "missed");
  return out;
}

int run_capacity(const CapacityCommandOptions& o) {
  if (o.trace.empty()) fail("--trace is required (a JSONL file; `seer trace` writes one)");
  if (!(o.criteria.tbt_p99_s > 0)) fail("--slo-tbt-p99 must be a positive number of seconds");
  if (!(o.criteria.sched_delay_p50_s > 0)) fail("--max-sched-delay must be a positive number of seconds");
  if (o.max_steps < 1 || o.max_steps > 64) fail("--max-steps must be in [1, 64], got {}", o.max_steps);
  if (o.endpoint != "completions" && o.endpoint != "chat")
    fail("--endpoint must be completions or chat, got '{}'", o.endpoint);
  if (o.num && *o.num < 1) fail("--num must be >= 1");
  Probe p;
  p.opts = o;
  p.entries = read_trace(o.trace);
  if (o.num && static_cast<size_t>(*o.num) < p.entries.size()) p.entries.resize(static_cast<size_t>(*o.num));
  if (p.entries.empty()) fail("{}: the trace has no requests", o.trace);
  p.runner.url = parse_server_url(o.url);
  p.runner.api = o.endpoint == "chat" ? Api::Chat : Api::Completions;
  p.runner.api_key = o.api_key;
  p.runner.model = o.model.empty() ? first_model(p.runner.url, o.api_key) : o.model;
  p.runner.max_concurrency = o.max_concurrency;
  p.runner.timeout_s = o.timeout_s;

  if (!o.json)
    std::printf("capacity of %s: %zu requests per step, P99 TBT <= %g s, median TTFT <= %g s\n", o.url.c_str(),
                p.entries.size(), o.criteria.tbt_p99_s, o.criteria.sched_delay_p50_s);
  const auto t0 = std::chrono::steady_clock::now();
  CapacityResult r =
      find_capacity([&](double rate) { return p.run(rate); }, o.criteria, o.start_rate, o.tolerance, o.max_steps);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (o.json) {
    auto j = capacity_json(r.capacity, p.steps);
    j["wall_s"] = wall;
    std::printf("%s\n", j.dump(2).c_str());
  } else {
    std::printf("capacity: %.3f req/s (%zu steps in %.0f s)\n", r.capacity, p.steps.size(), wall);
  }
  return 0;
}

}  // namespace seer::bench
