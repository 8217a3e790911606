#include "sim/s3_experiment.h"

#include <cmath>
#include <map>

#include <fmt/format.h>

#include "common/error.h"
#include "sim/catalog.h"
#include "sim/sim_runner.h"
#include "sim/svg_bars.h"
#include "sim/trace_generator.h"

namespace seer {
namespace {

struct PolicyRun {
  std::string label, policy, predictor;
};

std::vector<PolicyRun> policy_runs(const S3ExperimentOptions& o) {
  return {{"orca", "orca", ""}, {"s3", "s3", o.predictor}, {"s3-oracle", "s3", "oracle"}};
}

std::vector<TraceEntry> offline_alpaca_trace(const S3ExperimentOptions& o) {
  TraceGeneratorOptions g;
  g.num = o.num;
  g.lengths = "alpaca";
  g.data_dir = o.data_dir;
  g.seed = o.seed;
  auto trace = generate_trace(g);
  for (auto& e : trace) e.arrival_s = 0;  // offline: everything is available at once
  return trace;
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
  s.progress = o.progress;
  return s;
}

const S3Row* find_row(const std::vector<S3Row>& rows, const std::string& model, const std::string& policy) {
  for (const auto& r : rows)
    if (r.model == model && r.policy == policy) return &r;
  return nullptr;
}


}  // namespace

std::vector<S3Row> run_s3_experiment(const S3ExperimentOptions& o, const std::function<void(const S3Row&)>& on_row) {
  if (o.data_dir.empty()) fail("--data-dir is required (the folder holding alpaca/alpaca_data.json)");
  if (o.predictor.empty()) fail("--predictor is required (a file from `seer predict train`, or noisy:ACC)");
  if (o.num < 1) fail("--num must be >= 1, got {}", o.num);
  Catalog catalog = Catalog::load(o.catalog_dir.empty() ? Catalog::default_dir() : o.catalog_dir);
  const auto trace = offline_alpaca_trace(o);
  std::vector<S3Row> rows;
  for (const auto& model : o.models) {
    for (const auto& run : policy_runs(o)) {
      SimResult r = run_simulation(setup_for(o, catalog, model, run), trace);
      S3Row row{model, run.label, run.predictor, r.summary, r.wall_s};
      if (r.rejected > 0) fail("{}: {} of {} requests did not fit; the experiment needs all", model, r.rejected, o.num);
      rows.push_back(row);
      if (on_row) on_row(rows.back());
    }
  }
  return rows;
}

std::string s3_table_markdown(const S3ExperimentOptions& o, const std::vector<S3Row>& rows) {
  std::string md = fmt::format(
      "| model | policy | generated tokens/s | mean batch size | vs orca (tokens/s, batch) | prediction accuracy | "
      "reservation growths | supervisor preemptions |\n|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const auto& model : o.models) {
    const S3Row* base = find_row(rows, model, "orca");
    for (const auto& run : policy_runs(o)) {
      const S3Row* r = find_row(rows, model, run.label);
      if (!r) continue;
      const MetricsSummary& s = r->summary;
      std::string vs = base && base->summary.output_tokens_per_s > 0 && base->summary.batch_size.mean > 0
                           ? fmt::format("{:.2f}x, {:.2f}x", s.output_tokens_per_s / base->summary.output_tokens_per_s,
                                         s.batch_size.mean / base->summary.batch_size.mean)
                           : "";
      std::string acc = "", growths = "", sup = "";
      if (s.predictions) {
        acc = s.predictions->accuracy ? fmt::format("{:.1f} %", 100 * *s.predictions->accuracy) : "";
        growths = fmt::format("{}", s.predictions->reservation_growths);
        sup = fmt::format("{}", s.predictions->supervisor_preemptions);
      }
      md += fmt::format("| {} | {}{} | {:.0f} | {:.1f} | {} | {} | {} | {} |\n", model, run.label,
                        r->predictor.empty() || run.label == "s3-oracle" ? "" : fmt::format(" ({})", r->predictor),
                        s.output_tokens_per_s, s.batch_size.mean, vs, acc, growths, sup);
    }
  }
  return md;
}

std::string s3_chart_svg(const S3ExperimentOptions& o, const std::vector<S3Row>& rows) {
  BarPanel tput{"Generated tokens/s", "tokens/s", o.models, {}};
  BarPanel batch{"Mean batch size", "requests per iteration", o.models, {}};
  for (const auto& run : policy_runs(o)) {
    BarSeries t{run.label, {}}, b{run.label, {}};
    for (const auto& model : o.models) {
      const S3Row* r = find_row(rows, model, run.label);
      t.values.push_back(r ? r->summary.output_tokens_per_s : NAN);
      b.values.push_back(r ? r->summary.batch_size.mean : NAN);
    }
    tput.series.push_back(t);
    batch.series.push_back(b);
  }
  return render_bar_svg(fmt::format("S3 on {}: Alpaca, offline, {} requests, max length {}", o.hardware, o.num,
                                    o.max_len),
                        {tput, batch});
}

}  // namespace seer

namespace seer {

nlohmann::ordered_json s3_rows_json(const S3ExperimentOptions& o, const std::vector<S3Row>& rows) {
  nlohmann::ordered_json j;
  j["setup"] = {{"dataset", "alpaca"},   {"arrivals", "offline (all at t=0)"}, {"requests", o.num},
                {"hardware", o.hardware}, {"max_len", o.max_len},               {"padding", o.padding},
                {"max_batch", o.max_batch}, {"seed", o.seed}};
  j["rows"] = nlohmann::ordered_json::array();
  for (const auto& r : rows)
    j["rows"].push_back({{"model", r.model}, {"policy", r.policy}, {"predictor", r.predictor},
                         {"summary", summary_json(r.summary)}});
  return j;
}

}  // namespace seer
