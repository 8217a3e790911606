#pragma once
// The S3 experiment (docs/s3.md; the paper's throughput figure): Alpaca prompts,
// offline (every request arrives at t = 0, many times what the KV memory holds),
// one A100-80GB, GPT-J-6B / LLaMA-13B / GPT-NeoX-20B / LLaMA-33B, maximum sequence
// length 2048; policies orca (max-allocation), s3 with a predictor (the trained
// file) and s3 with the oracle. Reports generated tokens/s and mean batch size.
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "sim/metrics_summary.h"

namespace seer {

struct S3ExperimentOptions {
  std::string data_dir;     // holds alpaca/alpaca_data.json
  std::string predictor;    // the s3 row's predictor: a trained file (or noisy:ACC)
  std::vector<std::string> models = {"GPT-J-6B", "LLaMA-13B", "GPT-NeoX-20B", "LLaMA-33B"};
  std::string hardware = "A100-80GB";
  std::string catalog_dir;  // "": Catalog::default_dir()
  int64_t num = 4000;       // Alpaca requests, all at t = 0
  int32_t max_len = 2048;
  double padding = 0.1;
  int32_t max_batch = 2048;   // high enough that memory, not this cap, bounds the batch
  int32_t buckets = 10;       // oracle buckets (the trained file carries its own)
  uint64_t seed = 1;
  bool progress = true;       // a progress bar per simulation
};

struct S3Row {
  std::string model;
  std::string policy;     // "orca", "s3", "s3-oracle"
  std::string predictor;  // "" for orca
  MetricsSummary summary;
  double wall_s = 0;
};

// Runs every model x policy; on_row (optional) sees each row as it completes.
std::vector<S3Row> run_s3_experiment(const S3ExperimentOptions& o,
                                     const std::function<void(const S3Row&)>& on_row = {});

// Markdown: generated tokens/s and mean batch size per model x policy, with s3's
// prediction figures and the ratios to orca.
std::string s3_table_markdown(const S3ExperimentOptions& o, const std::vector<S3Row>& rows);
std::string s3_chart_svg(const S3ExperimentOptions& o, const std::vector<S3Row>& rows);
// {"setup": {...}, "rows": [{"model", "policy", "predictor", "summary": <seer sim --json>}]}
nlohmann::ordered_json s3_rows_json(const S3ExperimentOptions& o, const std::vector<S3Row>& rows);

}  // namespace seer
