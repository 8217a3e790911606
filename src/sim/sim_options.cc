#include "sim/sim_options.h"

#include <algorithm>
#include <filesystem>

#include "common/error.h"
#include "model/kv_type.h"
#include "model/model_file.h"

namespace seer {

SimSetup make_sim_setup(const SimOptions& o) {
  if (o.model.empty()) fail("--model is required (a catalog name or a model file)");
  check_stack_knobs(o);
  Catalog catalog = Catalog::load(o.catalog_dir.empty() ? Catalog::default_dir() : o.catalog_dir);
  SimSetup s;
  std::error_code ec;
  if (std::filesystem::is_regular_file(o.model, ec)) {
    auto file = ModelFile::open(o.model);
    s.model = model_spec_from_config(file->config());
    const double params = static_cast<double>(s.model.parameter_count());
    if (params > 0) s.cost.weight_bytes_per_param = static_cast<double>(file->weights().total_bytes()) / params;
  } else {
    s.model = catalog.model(o.model);
  }
  if (!o.cluster.empty()) {
    const ClusterSpec& c = catalog.cluster(o.cluster);
    s.hardware = catalog.hardware(c.hardware);
    s.cost.tp = c.tp;
    s.cost.pp = c.pp;
    s.cost.gpus_per_node = c.gpus_per_node;
  } else {
    s.hardware = catalog.hardware(o.hardware);
    s.cost.tp = o.tp;
    s.cost.pp = o.pp;
    s.cost.gpus_per_node = o.gpus_per_node;
  }
  if (s.cost.pp < 1) fail("--pp must be >= 1, got {}", s.cost.pp);
  if (s.cost.gpus_per_node < 0) fail("--gpus-per-node must be >= 1, got {}", s.cost.gpus_per_node);
  const KvType kv_type = parse_kv_type(o.kv_type);
  check_kv_head_dim(kv_type, s.model.head_dim > 0 ? s.model.head_dim : s.model.hidden / std::max(s.model.heads, 1));
  s.cost.kv_bytes_per_element = kv_bytes_per_element(kv_type);
  if (!(o.constrained_share >= 0 && o.constrained_share <= 1))
    fail("--constrained-share must be in [0, 1], got {}", o.constrained_share);
  s.cost.constrained_share = o.constrained_share;
  if (o.sampling_threads < 1) fail("--sampling-threads must be at least 1, got {}", o.sampling_threads);
  s.cost.sampling_threads = o.sampling_threads;
  static_cast<SchedulerKnobs&>(s.scheduler) = o;
  s.scheduler.tbt_slo_s = o.tbt_slo_s.value_or(0);  // unset: no SLO, the policy's budget
  s.scheduler.tile = s.hardware.name == "cpu" ? 64 : 128;
  require_predictor_for(o.policy, o.predictor.enabled());
  s.kv_fraction = o.kv_fraction;
  s.swap_space_gib = o.swap_space_gib;
  s.block_size = o.block_size;
  s.swa_full = o.swa_kv == "full";
  s.max_model_len = o.max_model_len;
  s.max_tokens = o.max_tokens;
  if (!(o.profile_kv_fraction >= 0 && o.profile_kv_fraction <= 1))
    fail("--profile-kv-fraction must be in [0, 1], got {}", o.profile_kv_fraction);
  s.profile_kv_fraction = o.profile_kv_fraction;
  if (o.kv_memory_bytes < 0) fail("--kv-memory must be positive");
  s.kv_memory_bytes = o.kv_memory_bytes;
  if (!(o.slo_scale >= 0)) fail("--slo-scale must be >= 0, got {}", o.slo_scale);
  s.slo_scale = o.slo_scale;
  if (o.slo_base != "request" && o.slo_base != "trace")
    fail("--slo-base must be 'request' or 'trace', got '{}'", o.slo_base);
  s.slo_from_trace_means = o.slo_base == "trace";
  check_padding_flag(o.padding);
  s.scheduler.padding = o.padding;
  s.predictor = o.predictor;
  s.check_invariants = o.check_invariants;
  s.chunk_tokens = o.chunk_tokens;
  s.swap_out_threshold = o.swap_out_threshold;
  s.eviction = o.eviction;
  s.progress = o.progress;
  if (o.speculate != "off" && !o.speculate_acceptance)
    fail("sim: --speculate {} needs --speculate-acceptance P (the simulator models the drafts' acceptance)",
         o.speculate);
  if (o.draft_cost_s != 0 && !o.speculate_acceptance) fail("sim: --draft-cost needs --speculate-acceptance P");
  if (o.speculate_acceptance) {
    const double p = *o.speculate_acceptance;
    if (!(p >= 0 && p <= 1)) fail("--speculate-acceptance must be in [0, 1], got {}", p);
    s.speculate_acceptance = p;
    s.draft_tokens = o.draft_tokens;
    if (!(o.draft_cost_s >= 0)) fail("--draft-cost must be >= 0 seconds, got {}", o.draft_cost_s);
    s.draft_cost_s = o.draft_cost_s;
    s.speculate_gate = o.speculate_gate == "adaptive";
  }
  return s;
}

std::vector<TraceEntry> load_sim_trace(const SimOptions& o) {
  if (o.trace.empty()) fail("--trace is required (a JSONL file; `seer trace` writes one)");
  if (o.num < 0) fail("--num must be >= 0, got {}", o.num);
  auto trace = read_trace(o.trace);
  std::stable_sort(trace.begin(), trace.end(), [](const auto& a, const auto& b) { return a.arrival_s < b.arrival_s; });
  if (o.num > 0 && static_cast<size_t>(o.num) < trace.size()) trace.resize(static_cast<size_t>(o.num));
  if (o.rate > 0) rescale_arrivals(trace, o.rate);
  if (o.rate < 0) fail("--rate must be positive, got {}", o.rate);
  return trace;
}

}  // namespace seer
