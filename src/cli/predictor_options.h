#pragma once
// The length-predictor and padding flags shared by `seer sim` and `seer serve`
// (S3 "Foresee", docs/s3.md).
#include <optional>

#include <CLI/CLI.hpp>

#include "predict/predictor_flags.h"

namespace seer::cli {

inline void add_predictor_options(CLI::App* cmd, PredictorFlags& p, std::optional<double>& padding) {
  cmd->add_option("--predictor", p.spec,
                  "Output-length predictor [S3]: oracle (true lengths; simulation), noisy:ACC (true bucket with "
                  "probability ACC), or a file from `seer predict train`");
  cmd->add_option("--predictor-buckets", p.buckets, "Length buckets of oracle/noisy predictors")
      ->capture_default_str();
  cmd->add_option("--predictor-max-len", p.max_len,
                  "Lengths the buckets cover, [0, L) in equal widths (default: the context length)");
  cmd->add_option("--predictor-seed", p.seed, "Seed of the noisy predictor's errors")->capture_default_str();
  cmd->add_option("--predictor-errors", p.errors,
                  "noisy:ACC draws its wrong buckets from this distribution (`seer predict eval --errors-out`; "
                  "default: the committed Alpaca one)");
  cmd->add_option("--predictor-reserve", p.reserve,
                  "What a trained predictor's prediction reserves: bucket (the predicted bucket's upper end, as "
                  "S3) or estimate (the model's token estimate)")
      ->capture_default_str();
  cmd->add_flag("--retrain,!--no-retrain", p.retrain,
                "A trained predictor file retrains on mispredicted requests in the background and swaps the "
                "new model in [S3] (default: on in serve, off in sim)");
  cmd->add_option("--padding", padding,
                  "Exact allocation [S3]: reserve prompt + predicted output x (1 + padding) (default: 0.1; "
                  "ecoserve 0.15)");
}

}  // namespace seer::cli
