// `seer sim`: a trace through a scheduling policy on modelled hardware (sim/), and
// its companions `sim capacity`, `sim sweep` and `sim calibrate`.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "cli/knob_options.h"
#include "cli/predictor_options.h"
#include "common/error.h"
#include "scheduler/scheduler.h"
#include "calibration/cpu_calibration.h"
#include "sim/iteration_log_check.h"
#include "server/byte_size.h"
#include "sim/calibration_fit.h"
#include "sim/capacity.h"
#include "sim/profile_holdout.h"
#include "sim/profile_validation.h"
#include "sim/replica_report.h"
#include "sim/routing/router.h"
#include "sim/sim_options.h"
#include "sim/sweep.h"

namespace seer::cli {
namespace {

// `with_policy`: --policy from the knob table (`sim sweep` takes --policies); `with_rate`:
// --rate (the companions that probe rates set it themselves).
void add_sim_options(CLI::App* cmd, SimOptions& o, bool with_policy, bool with_rate) {
  cmd->add_option("--trace", o.trace, "Request trace (JSONL; `seer trace` writes one)");
  cmd->add_option("--model", o.model, "Model: a catalog name (e.g. Llama-2-7B) or a GGUF file");
  auto* hardware =
      cmd->add_option("--hardware", o.hardware, "Accelerator from the catalog (A100-80GB, H100-80GB, H200, A40, cpu)")
          ->capture_default_str();
  add_knob_options(cmd, o, with_policy ? std::vector<std::string>{} : std::vector<std::string>{"--policy"});
  if (with_rate) cmd->add_option("--rate", o.rate, "Rescale the trace's arrivals to this mean rate (req/s)");
  cmd->add_option("--profile-kv-fraction", o.profile_kv_fraction,
                  "Share of the KV pool the decodes read in sarathi's profile (1: budget safe with full memory)")
      ->capture_default_str();
  cmd->add_option("--num", o.num, "Use only the first N requests of the trace");
  auto* tp = cmd->add_option("--tp", o.tp, "Tensor-parallel degree")->capture_default_str();
  auto* pp = cmd->add_option("--pp", o.pp,
                             "Pipeline-parallel degree: the layers split evenly over this many stages of --tp "
                             "devices each, the batch into as many micro-batches (docs/simulator.md)")
                 ->capture_default_str();
  auto* per_node = cmd->add_option("--gpus-per-node", o.gpus_per_node,
                                   "GPUs in one node: stage boundaries beyond it use the network link "
                                   "(default: the hardware entry's, 8)");
  cmd->add_option("--cluster", o.cluster,
                  "A named multi-GPU setup from the catalog (sets --hardware, --tp, --pp, --gpus-per-node), e.g. "
                  "A40x8-TP4-PP2")
      ->excludes(tp)
      ->excludes(pp)
      ->excludes(per_node)
      ->excludes(hardware);
  cmd->add_option("--kv-fraction", o.kv_fraction, "Share of device memory for weights + KV cache")
      ->capture_default_str();
  cmd->add_option("--swap-space", o.swap_space_gib, "Host KV tier per device (GiB)")->capture_default_str();
  cmd->add_option("--kv-type", o.kv_type, "K/V cache element type (f32, f16, bf16, q8_0, q4_0): bytes per K/V element (q8_0: 34 bytes per 32, q4_0: 18 per 32)")
      ->capture_default_str();
  cmd->add_option("--speculate-acceptance", o.speculate_acceptance,
                  "Model speculative decoding: each of up to --draft-tokens drafts per decode is accepted with this "
                  "probability in turn (a decode then costs 1 + K tokens and yields 1 + accepted; docs/speculative.md)");
  cmd->add_option("--draft-cost", o.draft_cost_s,
                  "With --speculate-acceptance: seconds a draft model spends per proposed draft token (its one-token "
                  "decode time), on the engine between steps; 0 models prompt lookup (free drafts)")
      ->capture_default_str();
  cmd->add_option("--constrained-share", o.constrained_share,
                  "Share of requests decoding under a grammar (response_format, tools): each such sampled row "
                  "adds its token mask's host CPU time to the step (docs/structured-outputs.md)")
      ->capture_default_str();
  cmd->add_option("--sampling-threads", o.sampling_threads,
                  "Host threads the executor samples a step's rows on (constrained rows' masks are applied there)")
      ->capture_default_str();
  cmd->add_option_function<std::string>(
      "--kv-memory", [&o](const std::string& v) { o.kv_memory_bytes = server::parse_byte_size(v, "--kv-memory"); },
      "Device KV pool, e.g. 12G (default: what --kv-fraction leaves after the weights)");
  cmd->add_option("--slo-scale", o.slo_scale,
                  "Deadline of requests without one: scale x (prefill time + per-token time x output) [EcoServe]; "
                  "0: none")
      ->capture_default_str();
  cmd->add_option("--slo-base", o.slo_base,
                  "The prefill and per-token times of that deadline: the request's own (request) or their means over "
                  "the trace, as the EcoServe paper states it (trace)")
      ->capture_default_str();
  cmd->add_option("--max-tokens", o.max_tokens,
                  "max_tokens of every request (default: fill the context; orca reserves prompt + max_tokens)");
  add_predictor_options(cmd, o.predictor, o.padding);
  cmd->add_option("--catalog-dir", o.catalog_dir, "Folder with hardware.json and models.json");
  cmd->add_flag("--check-invariants", o.check_invariants, "Check KV and queue invariants after every step");
  cmd->add_flag("--quiet", [&o](int64_t) { o.progress = false; }, "No progress bar");
}

// "tp=2", or "tp=4, pp=2" with pipeline stages.
std::string parallelism(const CostModelOptions& c) {
  return c.pp > 1 ? fmt::format("tp={}, pp={}", c.tp, c.pp) : fmt::format("tp={}", c.tp);
}

void print_setup(const SimSetup& s, const SimResult& r, size_t trace_size) {
  std::fprintf(stderr, "%s\n",
               fmt::format("{} on {} ({}), {} KV blocks of {} tokens{}{}; {} requests, {} rejected, {} truncated; "
                           "simulated in {:.2f} s",
                           s.model.name, s.hardware.name, parallelism(s.cost), r.device_blocks, s.block_size,
                           r.kv_groups > 1 ? fmt::format(" in {} layer groups (sliding-window ones freed behind the "
                                                         "window)", r.kv_groups)
                                           : "",
                           r.token_budget > 0 ? fmt::format(", token budget {}", r.token_budget) : "", trace_size,
                           r.rejected, r.truncated, r.wall_s)
                   .c_str());
}

std::vector<std::string> split_list(const std::string& s, const char* flag) {
  std::vector<std::string> out;
  std::stringstream in(s);
  std::string item;
  while (std::getline(in, item, ','))
    if (!item.empty()) out.push_back(item);
  if (out.empty()) fail("{} needs a comma-separated list", flag);
  return out;
}

std::vector<double> parse_rates(const std::string& s) {
  std::vector<double> out;
  for (const auto& item : split_list(s, "--rates")) {
    try {
      size_t used = 0;
      double v = std::stod(item, &used);
      if (used != item.size() || !(v > 0)) throw std::invalid_argument(item);
      out.push_back(v);
    } catch (const std::exception&) {
      fail("--rates: '{}' is not a positive number", item);
    }
  }
  return out;
}

MetricsSummary run_at(const SimOptions& o, const std::string& policy, double rate) {
  SimOptions p = o;
  p.policy = policy;
  p.rate = rate;
  p.progress = false;
  return run_simulation(make_sim_setup(p), load_sim_trace(p)).summary;
}

void add_capacity(CLI::App* sim, int& rc) {
  auto* cmd = sim->add_subcommand("capacity", "Highest request rate meeting P99 TBT <= X and median scheduling "
                                              "delay <= 2 s, by bisection");
  auto o = std::make_shared<SimOptions>();
  auto crit = std::make_shared<CapacityCriteria>();
  auto start = std::make_shared<double>(1.0);
  auto tol = std::make_shared<double>(0.05);
  add_sim_options(cmd, *o, true, false);
  cmd->add_option("--slo-tbt-p99", crit->tbt_p99_s, "P99 TBT bound (s)")->required();
  cmd->add_option("--max-sched-delay", crit->sched_delay_p50_s, "Median scheduling delay bound (s)")
      ->capture_default_str();
  cmd->add_option("--min-slo-attainment", crit->min_slo_attainment,
                  "Also require this share of requests to meet their own SLOs from the trace (0-1; 0: off)")
      ->check(CLI::Range(0.0, 1.0))
      ->capture_default_str();
  cmd->add_option("--start-rate", *start, "First rate probed (req/s)")->capture_default_str();
  cmd->add_option("--tolerance", *tol, "Stop when the bracket is within this fraction")->capture_default_str();
  cmd->callback([=, &rc] {
    auto result = find_capacity([&](double rate) { return run_at(*o, o->policy, rate); }, *crit, *start, *tol, 24,
                                [](const CapacityProbe& p) {
                                  std::printf("rate %8.3f req/s: TBT p99 %.4f s, median scheduling delay %.3f s, "
                                              "%d requests%s -> %s\n",
                                              p.rate, p.summary.tbt_s.p99, p.summary.scheduling_delay_p50_s,
                                              static_cast<int>(p.summary.requests),
                                              p.summary.slo_attainment
                                                  ? fmt::format(", SLO attainment {:.1f}%",
                                                                100 * *p.summary.slo_attainment)
                                                        .c_str()
                                                  : "",
                                              p.meets ? "meets" : "misses");
                                  std::fflush(stdout);
                                });
    std::printf("capacity of %s: %.3f req/s (P99 TBT <= %g s, median scheduling delay <= %g s%s)\n",
                o->policy.c_str(), result.capacity, crit->tbt_p99_s, crit->sched_delay_p50_s,
                crit->min_slo_attainment > 0
                    ? fmt::format(", SLO attainment >= {:g}%", 100 * crit->min_slo_attainment).c_str()
                    : "");
    rc = 0;
  });
}

void add_sweep(CLI::App* sim, int& rc) {
  auto* cmd = sim->add_subcommand("sweep", "Latency against request rate for several policies (SVG + JSON)");
  auto o = std::make_shared<SimOptions>();
  auto policies = std::make_shared<std::string>("orca,vllm,sarathi");
  auto rates = std::make_shared<std::string>();
  auto out = std::make_shared<std::string>();
  auto json_out = std::make_shared<std::string>();
  add_sim_options(cmd, *o, false, false);
  cmd->add_option("--policies", *policies, "Comma-separated policies")->capture_default_str();
  cmd->add_option("--rates", *rates, "Comma-separated request rates (req/s)")->required();
  cmd->add_option("--out", *out, "SVG file to write")->required();
  cmd->add_option("--json-out", *json_out, "JSON of the points (default: the SVG path with .json)");
  cmd->callback([=, &rc] {
    auto pols = split_list(*policies, "--policies");
    auto rs = parse_rates(*rates);
    auto points = run_sweep(pols, rs, [&](const std::string& p, double r) { return run_at(*o, p, r); },
                            [](const SweepPoint& p) {
                              std::fprintf(stderr, "%-8s rate %8.3f: e2e p50 %.3f s, p99 %.3f s, TBT p99 %.4f s\n",
                                           p.policy.c_str(), p.rate, p.summary.e2e_s.p50, p.summary.e2e_s.p99,
                                           p.summary.tbt_s.p99);
                            });
    SimSetup setup = make_sim_setup(*o);
    std::string title = fmt::format("{} on {} ({})", setup.model.name, setup.hardware.name, parallelism(setup.cost));
    std::ofstream svg(*out);
    if (!(svg << sweep_svg(title, points))) fail("cannot write {}", *out);
    std::string jpath = json_out->empty() ? (out->size() > 4 && out->substr(out->size() - 4) == ".svg"
                                                 ? out->substr(0, out->size() - 4) + ".json"
                                                 : *out + ".json")
                                          : *json_out;
    std::ofstream js(jpath);
    if (!(js << sweep_json(title, points).dump(2) << "\n")) fail("cannot write {}", jpath);
    std::fprintf(stderr, "wrote %s and %s\n", out->c_str(), jpath.c_str());
    rc = 0;
  });
}

// `sim calibrate --from-log`: the cpu entry refitted to the real engine's own
// iterations, as `seer serve --iteration-log` recorded them under real traffic.
HardwareSpec calibrate_from_log(const SimOptions& o, const std::string& log) {
  SimSetup setup = make_sim_setup(o);
  const auto samples = read_iteration_log(log);
  const CostModel before(setup.model, setup.hardware, setup.cost);
  HardwareSpec hw = fit_efficiency(setup.model, setup.hardware, setup.cost, samples, /*match_total_time=*/true);
  const CostModel after(setup.model, hw, setup.cost);
  std::printf("before fitting (the '%s' entry as it was):\n%s", o.hardware.c_str(),
              render_iteration_check(check_iterations(before, samples)).c_str());
  std::printf("after fitting:\n%s", render_iteration_check(check_iterations(after, samples)).c_str());
  const FitError e = model_error(after, samples);
  hw.description = fmt::format("{}; refitted by seer sim calibrate --from-log on {} served iterations of {}: mean "
                               "error {:.1f}%, max {:.1f}%",
                               setup.hardware.description, samples.size(),
                               std::filesystem::path(o.model).filename().string(), 100 * e.mean_relative,
                               100 * e.max_relative);
  return hw;
}

void add_calibrate(CLI::App* sim, int& rc) {
  auto* cmd = sim->add_subcommand("calibrate", "Fit the `cpu` hardware entry to measurements of the CPU backend");
  auto o = std::make_shared<CalibrateOptions>();
  auto out = std::make_shared<std::string>();
  auto log = std::make_shared<std::string>();
  auto so = std::make_shared<SimOptions>();
  so->hardware = "cpu";
  cmd->add_option("--model", o->model_path, "Model file (GGUF or llama2.c)")->required();
  cmd->add_option("--out", *out, "Hardware catalog file to update (default: hardware.json of --catalog-dir or the default catalog)");
  cmd->add_option("--threads", o->threads, "CPU threads (0: all)")->capture_default_str();
  cmd->add_option("--repeats", o->repeats, "Timed runs per shape")->capture_default_str();
  cmd->add_flag("--quick", o->quick, "Fewer, smaller shapes");
  cmd->add_option("--from-log", *log, "Fit to the iterations of a `seer serve --iteration-log` file instead of "
                                      "timing synthetic shapes (starting from the catalog's entry; the fit also matches "
                                      "their total time)");
  cmd->add_option("--kv-type", so->kv_type, "With --from-log: the server's --kv-type")->capture_default_str();
  cmd->add_option("--catalog-dir", so->catalog_dir, "With --from-log: the catalog holding the entry to refit");
  cmd->callback([=, &rc] {
    const std::string dir = so->catalog_dir.empty() ? Catalog::default_dir() : so->catalog_dir;
    const std::string path = out->empty() ? dir + "/hardware.json" : *out;
    if (!log->empty()) {
      so->model = o->model_path;
      write_hardware_entry(path, calibrate_from_log(*so, *log));
      std::printf("wrote the cpu entry to %s\n", path.c_str());
      rc = 0;
      return;
    }
    CalibrationResult r = calibrate_cpu(*o);
    CostModel fitted(r.model, r.cpu, r.cost);
    std::printf("%-22s %12s %12s %8s\n", "shape", "measured ms", "model ms", "error");
    for (const auto& s : r.samples) {
      double pred = fitted.iteration_time(s.shape);
      std::printf("%-22s %12.3f %12.3f %7.1f%%\n", s.label.c_str(), 1e3 * s.seconds, 1e3 * pred,
                  100 * (pred - s.seconds) / s.seconds);
    }
    std::printf("bandwidth %.1f GB/s, SGEMM peak %.1f GFLOP/s\n", r.cpu.memory_bandwidth / 1e9, r.cpu.peak_flops / 1e9);
    std::printf("fitted efficiency: attention memory %.3f, attention compute %.3f; overhead %.1f us\n",
                r.cpu.efficiency.attention_memory, r.cpu.efficiency.attention_compute,
                1e6 * r.cpu.iteration_overhead_s);
    for (const auto& k : r.cpu.linear_regimes)
      std::printf("  linear layers from %d rows: memory %.3f, compute %.3f, overlap p = %.2f\n", k.min_tokens,
                  k.memory, k.compute, k.overlap);
    std::printf("model error: mean %.1f%%, max %.1f%% (before fitting: mean %.1f%%, max %.1f%%)\n",
                100 * r.error_after.mean_relative, 100 * r.error_after.max_relative,
                100 * r.error_before.mean_relative, 100 * r.error_before.max_relative);
    write_hardware_entry(path, r.cpu);
    std::printf("wrote the cpu entry to %s\n", path.c_str());
    rc = 0;
  });
}

void add_validate(CLI::App* sim, int& rc) {
  auto* cmd = sim->add_subcommand(
      "validate", "Check the cost model against measured GPU profiles (per-layer non-attention time and "
                  "all-reduce) or against the real engine's iterations (--iteration-log)");
  auto profiles = std::make_shared<std::string>();
  auto log = std::make_shared<std::string>();
  auto o = std::make_shared<SimOptions>();
  o->hardware = "cpu";
  auto json = std::make_shared<bool>(false);
  auto hold_out = std::make_shared<std::vector<std::string>>();
  auto cross = std::make_shared<std::string>();
  cmd->add_option("--profiles", *profiles, "Folder with compute/<device>/<org>/<model>/mlp.csv and "
                                           "network/<topology>/all_reduce.csv (Vidur's layout)");
  cmd->add_option("--hold-out", *hold_out, "With --profiles: refit each device's block factors without these rows and "
                                          "report the error on them: model:NAME, tp:N (repeatable or comma-separated)");
  cmd->add_option("--cross-validate", *cross, "With --profiles: 'models' (leave one profiled model out, for every "
                                              "model of every device) or 'tp' (leave one TP degree out)");
  cmd->add_option("--iteration-log", *log, "A `seer serve --iteration-log` file: each measured iteration against "
                                           "the cost model's time for the same plan (with --model, --hardware)");
  cmd->add_option("--model", o->model, "With --iteration-log: the served model file (or a catalog name)");
  cmd->add_option("--hardware", o->hardware, "With --iteration-log: the hardware entry")->capture_default_str();
  cmd->add_option("--kv-type", o->kv_type, "With --iteration-log: the server's --kv-type")->capture_default_str();
  cmd->add_option("--catalog-dir", o->catalog_dir, "Folder with hardware.json and models.json");
  cmd->add_flag("--json", *json, "Print one JSON object instead of the tables");
  cmd->callback([=, &rc] {
    if (profiles->empty() && (!hold_out->empty() || !cross->empty()))
      fail("--hold-out and --cross-validate need --profiles DIR");
    if (profiles->empty() == log->empty()) fail("give exactly one of --profiles DIR and --iteration-log FILE");
    if (!log->empty()) {
      SimSetup setup = make_sim_setup(*o);
      auto rows = check_iterations(CostModel(setup.model, setup.hardware, setup.cost), read_iteration_log(*log));
      if (*json) std::cout << iteration_check_json(rows).dump(2) << std::endl;
      else std::cout << render_iteration_check(rows);
      rc = 0;
      return;
    }
    Catalog catalog = Catalog::load(o->catalog_dir.empty() ? Catalog::default_dir() : o->catalog_dir);
    if (!hold_out->empty() || !cross->empty()) {
      if (!hold_out->empty() && !cross->empty()) fail("give at most one of --hold-out and --cross-validate");
      const auto profiles_read = read_block_profiles(*profiles, catalog);
      HoldOutValidation h = cross->empty()
                                ? validate_held_out(profiles_read, catalog, parse_hold_out(*hold_out))
                                : cross_validate(profiles_read, catalog, parse_cross_validate(*cross));
      if (*json) std::cout << held_out_json(h).dump(2) << std::endl;
      else std::cout << render_held_out_table(h);
      rc = 0;
      return;
    }
    ProfileValidation v = validate_against_profiles(*profiles, catalog);
    if (*json) std::cout << validation_json(v).dump(2) << std::endl;
    else std::cout << render_validation_table(v);
    rc = 0;
  });
}

void add_replica_options(CLI::App* cmd, ReplicaFlags& f) {
  cmd->add_option("--replicas", f.replicas, "Simulate N replicas behind a router, one event loop (docs/replicas.md)");
  std::string help = "Routing policy of --replicas:";
  for (const auto& p : routing_policies()) help += "\n  " + p.name + ": " + p.description;
  cmd->add_option("--routing", f.routing, help)->capture_default_str();
  cmd->add_flag("--shared-tier", f.shared_tier,
                "A KV tier shared by the replicas below their host tiers (caching policies: pensieve)");
  cmd->add_option("--shared-tier-spec", f.shared_tier_spec, "The shared tier's entry in hardware.json's shared_kv_tiers")
      ->capture_default_str();
  cmd->add_flag("--shared-tier-always-fetch", f.always_fetch,
                "Fetch stored KV even when prefilling it again would be faster than the transfer");
  cmd->add_flag("--shared-tier-evicted-only", f.evicted_only,
                "Store only chunks the host tiers drop (default: every finished turn's KV, too)");
  cmd->add_option_function<std::string>(
      "--shared-tier-max-bytes",
      [&f](const std::string& s) { f.shared_max_bytes = server::parse_byte_size(s, "--shared-tier-max-bytes"); },
      "Cap on the shared tier's K/V bytes, oldest conversation evicted first (e.g. 64GiB; default: none)");
  cmd->add_option("--shared-tier-ttl", f.shared_ttl_s,
                  "Seconds of idleness after which the shared tier forgets a conversation (0: never)")
      ->capture_default_str();
  cmd->add_option("--fail-replica", f.fail, "REPLICA@SECONDS: that replica dies at that simulated time");
}

void run_replicas(SimSetup setup, const std::vector<TraceEntry>& trace, const ReplicaFlags& f,
                  const std::string& catalog_dir, bool json) {
  apply_replica_flags(f, setup);
  ReplicaSetOptions ro = make_replica_options(f, catalog_dir);
  ReplicaSetResult r = run_replica_set(setup, ro, trace);
  print_setup(setup, r.sim, trace.size());
  if (json)
    std::cout << replica_set_json(ro, r).dump() << std::endl;
  else
    std::cout << render_replica_table(ro, r);
}

}  // namespace

void add_sim(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("sim", "Simulate a scheduling policy on a trace at cluster scale");
  auto o = std::make_shared<SimOptions>();
  auto json = std::make_shared<bool>(false);
  auto rf = std::make_shared<ReplicaFlags>();
  add_sim_options(cmd, *o, true, true);
  cmd->add_flag("--json", *json, "Print exactly one JSON object with the metrics on stdout");
  add_replica_options(cmd, *rf);
  add_capacity(cmd, rc);
  add_sweep(cmd, rc);
  add_calibrate(cmd, rc);
  add_validate(cmd, rc);
  cmd->callback([=, &rc] {
    if (!cmd->get_subcommands().empty()) return;  // a companion ran
    SimSetup setup = make_sim_setup(*o);
    auto trace = load_sim_trace(*o);
    if (rf->any()) {
      run_replicas(setup, trace, *rf, o->catalog_dir, *json);
      rc = 0;
      return;
    }
    SimResult r = run_simulation(setup, trace);
    print_setup(setup, r, trace.size());
    if (*json) {
      auto j = summary_json(r.summary);
      j["slo_attainment"] = r.slo_attainment ? nlohmann::ordered_json(*r.slo_attainment) : nlohmann::ordered_json();
      j["jct_s"] = {{"mean", r.summary.e2e_s.mean}, {"p50", r.summary.e2e_s.p50}, {"p99", r.summary.e2e_s.p99}};
      if (!r.slo_attainment_by_class.empty()) j["slo_attainment_by_class"] = r.slo_attainment_by_class;
      std::cout << j.dump() << std::endl;
    } else {
      std::cout << render_summary_table(r.summary);
      if (r.slo_attainment) std::cout << fmt::format("SLO attainment: {:.1f}%\n", 100 * *r.slo_attainment);
      for (const auto& [name, a] : r.slo_attainment_by_class)
        std::cout << fmt::format("  {:<8} {:.1f}%\n", name, 100 * a);
    }
    rc = 0;
  });
}

}  // namespace seer::cli
