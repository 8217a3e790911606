#include "sim/s3_experiment.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "predict/predictor_file.h"
#include "sim/catalog.h"
#include "sim/labeled_datasets.h"
#include "sim/trace_rng.h"
#include "sim/sim_runner.h"
#include "sim/svg_bars.h"

namespace seer {
namespace {

bool is_noisy(const std::string& spec) { return spec.starts_with("noisy:"); }

struct PolicyRun {
  std::string label, policy, predictor;
  std::string reserve = "bucket";  // PredictorFlags::reserve
};

std::vector<PolicyRun> policy_runs(const S3ExperimentOptions& o, const S3Workload& w) {
  std::vector<PolicyRun> runs = {{"orca", "orca", ""}, {"vllm", "vllm", ""}, {"s3", "s3", w.predictor}};
  if (!is_noisy(w.predictor)) runs.push_back({"s3-estimate", "s3", w.predictor, "estimate"});
  if (o.noisy_accuracy > 0) runs.push_back({"s3-noisy", "s3", fmt::format("noisy:{}", o.noisy_accuracy)});
  runs.push_back({"s3-oracle", "s3", "oracle"});
  return runs;
}

// The policy labels in table order, without the workload (for tables and charts).
std::vector<std::string> run_labels(const std::vector<S3Row>& rows) {
  std::vector<std::string> labels;
  for (const auto& r : rows)
    if (std::find(labels.begin(), labels.end(), r.policy) == labels.end()) labels.push_back(r.policy);
  return labels;
}

SimSetup setup_for(const S3ExperimentOptions& o, const Catalog& catalog, const std::string& model,
                   const PolicyRun& run) {
  SimSetup s;
  s.model = catalog.model(model);
  s.hardware = catalog.hardware(o.hardware);
  s.max_model_len = o.max_len;
  s.scheduler.policy = run.policy;
  s.scheduler.max_batch_size = o.max_batch;
  s.scheduler.padding = o.padding;
  s.predictor.spec = run.predictor;
  s.predictor.buckets = o.buckets;
  s.predictor.max_len = o.max_len;
  s.predictor.seed = o.seed;
  s.predictor.reserve = run.reserve;
  s.progress = o.progress;
  return s;
}

const S3Row* find_row(const std::vector<S3Row>& rows, const std::string& model, const std::string& policy) {
  for (const auto& r : rows)
    if (r.model == model && r.policy == policy) return &r;
  return nullptr;
}

// The split seed a trained file was made with (its notes), else `fallback`.
uint64_t split_seed_of(const std::string& predictor, uint64_t fallback) {
  if (predictor.empty() || is_noisy(predictor)) return fallback;
  PredictorFile f = load_predictor_file(predictor);
  if (f.notes.contains("split_seed") && f.notes["split_seed"].is_number_unsigned())
    return f.notes["split_seed"].get<uint64_t>();
  return fallback;
}

std::vector<TraceEntry> offline_trace(const std::vector<LabeledPrompt>& prompts, const std::vector<size_t>& pool,
                                      int64_t num, uint64_t seed) {
  TraceRng rng(seed);
  std::vector<TraceEntry> trace(static_cast<size_t>(num));
  for (size_t i = 0; i < trace.size(); ++i) {
    const LabeledPrompt& p = prompts[pool[rng.below(pool.size())]];
    TraceEntry& e = trace[i];
    e.id = fmt::format("r{}", i);
    e.arrival_s = 0;  // offline: everything is available at once
    e.prompt = p.prompt;
    e.prompt_tokens = p.prompt_tokens;
    e.output_tokens = p.output_tokens;
  }
  return trace;
}

void train_predictor(const std::vector<LabeledPrompt>& prompts, const std::vector<size_t>& test_idx,
                     const S3ExperimentOptions& o, const std::string& out) {
  std::vector<LengthExample> train;
  size_t t = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    if (t < test_idx.size() && test_idx[t] == i) {
      ++t;
      continue;
    }
    train.push_back({prompts[i].prompt, prompts[i].output_tokens});
  }
  TrainOptions to;
  to.max_len = o.max_len;
  to.buckets = LengthBuckets::equal(o.max_len, o.buckets);
  to.seed = o.seed;
  to.progress = o.progress;
  PredictorFile f;
  f.model = train_length_model(train, to);
  f.notes = {{"dataset", "alpaca"}, {"split_seed", o.seed}, {"train_requests", train.size()},
             {"test_requests", test_idx.size()}, {"trained_by", "seer experiment s3"}};
  save_predictor_file(out, f);
}

}  // namespace

S3Workload prepare_s3_workload(const S3ExperimentOptions& o, const std::string& train_out) {
  if (o.data_dir.empty()) fail("--data-dir is required (the folder holding alpaca/ and tokenizer-tests/)");
  if (o.num < 1) fail("--num must be >= 1, got {}", o.num);
  S3Workload w;
  const uint64_t split_seed = split_seed_of(o.predictor, o.seed);
  auto prompts = read_labeled_dataset(o.data_dir, "alpaca", o.progress);
  const auto test_idx = test_split(prompts.size(), split_seed);
  if (test_idx.empty()) fail("alpaca: too few prompts for an 80/20 split");
  // noisy:ACC reads no prompt, so it may see any of them; a trained predictor is
  // measured on prompts it never saw.
  std::vector<size_t> pool = test_idx;
  if (is_noisy(o.predictor)) {
    pool.resize(prompts.size());
    for (size_t i = 0; i < pool.size(); ++i) pool[i] = i;
  }
  w.test_prompts = pool.size();
  w.trace = offline_trace(prompts, pool, o.num, o.seed);
  if (o.predictor.empty()) {
    if (o.progress) std::fprintf(stderr, "training the length predictor on %zu Alpaca prompts\n",
                                 prompts.size() - test_idx.size());
    train_predictor(prompts, test_idx, o, train_out);
    w.predictor = train_out;
    w.predictor_label = "trained here";
  } else {
    w.predictor = o.predictor;
    w.predictor_label = is_noisy(o.predictor)
                            ? o.predictor
                            : "trained (" + std::filesystem::path(o.predictor).filename().string() + ")";
  }
  return w;
}

std::vector<S3Row> run_s3_experiment(const S3ExperimentOptions& o, const S3Workload& w,
                                     const std::function<void(const S3Row&)>& on_row) {
  Catalog catalog = Catalog::load(o.catalog_dir.empty() ? Catalog::default_dir() : o.catalog_dir);
  std::vector<S3Row> rows;
  for (const auto& model : o.models) {
    for (const auto& run : policy_runs(o, w)) {
      SimResult r = run_simulation(setup_for(o, catalog, model, run), w.trace);
      if (r.rejected > 0)
        fail("{}: {} of {} requests did not fit; the experiment needs all", model, r.rejected, w.trace.size());
      rows.push_back({model, run.label, run.predictor, r.summary, r.wall_s});
      if (on_row) on_row(rows.back());
    }
  }
  return rows;
}

namespace {

std::string predictor_cell(const S3Row& r, const S3Workload& w) {
  if (r.predictor.empty()) return "-";
  if (r.predictor == w.predictor && !is_noisy(r.predictor))
    return w.predictor_label + (r.policy == "s3-estimate" ? ", token estimate" : ", bucket bound");
  return r.predictor;
}

std::string ratio_cell(const MetricsSummary& s, const S3Row* base) {
  if (!base || !(base->summary.output_tokens_per_s > 0) || !(base->summary.batch_size.mean > 0)) return "";
  return fmt::format("{:.2f}x, {:.2f}x", s.output_tokens_per_s / base->summary.output_tokens_per_s,
                     s.batch_size.mean / base->summary.batch_size.mean);
}

}  // namespace

std::string s3_table_markdown(const S3ExperimentOptions& o, const S3Workload& w, const std::vector<S3Row>& rows) {
  std::string md =
      "| model | policy | predictor | generated tokens/s | mean batch size | vs orca (tokens/s, batch) | "
      "bucket accuracy | under-predicted | reservation growths | supervisor preemptions | preemptions |\n"
      "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
  const auto labels = run_labels(rows);
  for (const auto& model : o.models) {
    const S3Row* base = find_row(rows, model, "orca");
    for (const auto& label : labels) {
      const S3Row* r = find_row(rows, model, label);
      if (!r) continue;
      const MetricsSummary& s = r->summary;
      std::string acc, under, growths, sup;
      if (s.predictions) {
        acc = s.predictions->accuracy ? fmt::format("{:.1f} %", 100 * *s.predictions->accuracy) : "";
        under = fmt::format("{}", s.predictions->under_predictions);
        growths = fmt::format("{}", s.predictions->reservation_growths);
        sup = fmt::format("{}", s.predictions->supervisor_preemptions);
      }
      md += fmt::format("| {} | {} | {} | {:.0f} | {:.1f} | {} | {} | {} | {} | {} | {} |\n", model, label,
                        predictor_cell(*r, w), s.output_tokens_per_s, s.batch_size.mean, ratio_cell(s, base), acc,
                        under, growths, sup, s.totals.preemptions);
    }
  }
  return md;
}

std::string s3_chart_svg(const S3ExperimentOptions& o, const std::vector<S3Row>& rows) {
  BarPanel tput{"Generated tokens/s", "tokens/s", o.models, {}};
  BarPanel batch{"Mean batch size", "requests per iteration", o.models, {}};
  for (const auto& label : run_labels(rows)) {
    BarSeries t{label, {}}, b{label, {}};
    for (const auto& model : o.models) {
      const S3Row* r = find_row(rows, model, label);
      t.values.push_back(r ? r->summary.output_tokens_per_s : NAN);
      b.values.push_back(r ? r->summary.batch_size.mean : NAN);
    }
    tput.series.push_back(t);
    batch.series.push_back(b);
  }
  return render_bar_svg(fmt::format("S3 on {}: Alpaca (held-out prompts), offline, {} requests, max length {}",
                                    o.hardware, o.num, o.max_len),
                        {tput, batch});
}

nlohmann::ordered_json s3_rows_json(const S3ExperimentOptions& o, const S3Workload& w,
                                    const std::vector<S3Row>& rows) {
  nlohmann::ordered_json j;
  j["setup"] = {{"dataset", "alpaca"},        {"arrivals", "offline (all at t=0)"},
                {"requests", o.num},          {"prompt_pool", w.test_prompts},
                {"hardware", o.hardware},     {"max_len", o.max_len},
                {"padding", o.padding},       {"max_batch", o.max_batch},
                {"buckets", o.buckets},       {"seed", o.seed},
                {"predictor", w.predictor_label}};
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    j["rows"].push_back({{"model", r.model}, {"policy", r.policy}, {"predictor", predictor_cell(r, w)},
                         {"summary", summary_json(r.summary)}});
  return j;
}

}  // namespace seer
