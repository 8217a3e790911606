#pragma once
// The S3 experiment (docs/s3.md; the paper's throughput figure): Alpaca prompts,
// offline (every request arrives at t = 0, many times what the KV memory holds),
// one A100-80GB, GPT-J-6B / LLaMA-13B / GPT-NeoX-20B / LLaMA-33B, maximum sequence
// length 2048; policies orca (max-allocation), vllm (paged, for reference), s3 with
// the trained predictor (reserving the predicted bucket's upper end, as the paper,
// and its token estimate), s3 with a noisy predictor of the paper's accuracy and s3
// with the oracle. Reports generated tokens/s and mean batch size.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics_summary.h"
#include "sim/trace.h"

namespace seer {

struct S3ExperimentOptions {
  std::string data_dir;  // holds alpaca/alpaca_data.json and tokenizer-tests/
  // The s3 row's predictor: a file from `seer predict train` (its split seed picks
  // the held-out prompts the trace draws from), noisy:ACC (for traces without
  // prompt text), or "" to train one here on the 80 % split (as `seer predict train`).
  std::string predictor;
  // > 0: also an s3 row with noisy:<this> (e.g. 0.986, the paper's DistilBERT accuracy
  // on Alpaca), separating the predictor's quality from the scheduler.
  double noisy_accuracy = 0.986;
  std::vector<std::string> models = {"GPT-J-6B", "LLaMA-13B", "GPT-NeoX-20B", "LLaMA-33B"};
  std::string hardware = "A100-80GB";
  std::string catalog_dir;  // "": Catalog::default_dir()
  int64_t num = 4000;       // Alpaca requests, all at t = 0
  int32_t max_len = 2048;
  double padding = 0.1;
  int32_t max_batch = 2048;  // high enough that memory, not this cap, bounds the batch
  int32_t buckets = 10;      // oracle and noisy buckets (a trained file carries its own)
  uint64_t seed = 1;         // the request sample; the split when training here
  bool progress = true;      // progress bars on stderr
};

// What the experiment's predictor is and the prompts it never trained on.
struct S3Workload {
  std::vector<TraceEntry> trace;  // num held-out Alpaca prompts, all at t = 0
  std::string predictor;          // the spec the s3 row runs with
  std::string predictor_label;    // for the table: "trained (file)" or "noisy:ACC"
  size_t test_prompts = 0;        // the held-out prompts the trace is drawn from
};
// Reads Alpaca with Llama-2 token counts, splits it as `seer predict` does, trains a
// predictor on the training split unless o.predictor names one (written to
// `train_out`), and samples o.num requests from the test split.
S3Workload prepare_s3_workload(const S3ExperimentOptions& o, const std::string& train_out);

struct S3Row {
  std::string model;
  std::string policy;     // "orca", "vllm", "s3", "s3-estimate", "s3-noisy", "s3-oracle"
  std::string predictor;  // "" for orca
  MetricsSummary summary;
  double wall_s = 0;
};

// Runs every model x policy on `w`; on_row (optional) sees each row as it completes.
std::vector<S3Row> run_s3_experiment(const S3ExperimentOptions& o, const S3Workload& w,
                                     const std::function<void(const S3Row&)>& on_row = {});

// Markdown: generated tokens/s and mean batch size per model x policy, with s3's
// prediction figures and the ratios to orca.
std::string s3_table_markdown(const S3ExperimentOptions& o, const S3Workload& w, const std::vector<S3Row>& rows);
std::string s3_chart_svg(const S3ExperimentOptions& o, const std::vector<S3Row>& rows);
// {"setup": {...}, "rows": [{"model", "policy", "predictor", "summary": <seer sim --json>}]}
nlohmann::ordered_json s3_rows_json(const S3ExperimentOptions& o, const S3Workload& w, const std::vector<S3Row>& rows);

}  // namespace seer
