// `seer experiment <name>`: the seeds' experiments as one command each, writing a
// markdown table and an SVG chart under --out (docs/results/ in the repository).
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>

#include <unistd.h>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "sim/s3_experiment.h"

namespace seer::cli {
namespace {

void write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  if (!(out << text)) fail("cannot write {}", path);
}

// The `experiment` command, created by whichever experiment registers first.
CLI::App* experiment_command(CLI::App& app) {
  const std::function<bool(CLI::App*)> named = [](CLI::App* a) { return a->get_name() == "experiment"; };
  for (CLI::App* sub : app.get_subcommands(named)) return sub;
  auto* cmd = app.add_subcommand("experiment", "Reproduce a paper's experiment in the simulator (table + SVG)");
  cmd->require_subcommand(1);
  return cmd;
}

void add_s3_experiment(CLI::App& app, int& rc) {
  auto* cmd = experiment_command(app)->add_subcommand(
      "s3", "S3: held-out Alpaca prompts offline on one A100-80GB; orca, vllm, s3 (trained predictor), s3 "
            "(noisy at the paper's accuracy), s3 (oracle): tokens/s and batch size");
  auto o = std::make_shared<S3ExperimentOptions>();
  auto out = std::make_shared<std::string>("docs/results");
  cmd->add_option("--data-dir", o->data_dir, "Folder holding alpaca/ and tokenizer-tests/ (../shared/data)")
      ->required();
  cmd->add_option("--out", *out, "Folder for s3.md, s3.svg and s3.json")->capture_default_str();
  cmd->add_option("--predictor", o->predictor,
                  "The s3 row's predictor: a file from `seer predict train`, or noisy:ACC; default: train one "
                  "on the 80 % split (about a minute)");
  cmd->add_option("--noisy", o->noisy_accuracy,
                  "Accuracy of the extra s3-noisy row (0: no such row; 0.986 is S3's on Alpaca)")
      ->capture_default_str();
  cmd->add_option("--num", o->num, "Alpaca requests, all arriving at t = 0")->capture_default_str();
  cmd->add_option("--models", o->models, "Catalog models")->delimiter(',')->capture_default_str();
  cmd->add_option("--hardware", o->hardware, "Catalog accelerator")->capture_default_str();
  cmd->add_option("--max-len", o->max_len, "Maximum sequence length")->capture_default_str();
  cmd->add_option("--padding", o->padding, "Exact allocation padding")->capture_default_str();
  cmd->add_option("--max-batch", o->max_batch, "Batch-size cap (high: memory bounds the batch)")->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of the request sample (and of the split when training here)")
      ->capture_default_str();
  cmd->add_option("--catalog-dir", o->catalog_dir, "Folder with hardware.json and models.json");
  cmd->add_flag("--quiet", [o](int64_t) { o->progress = false; }, "No progress bars");
  cmd->callback([o, out, &rc] {
    std::filesystem::create_directories(*out);
    const auto scratch = std::filesystem::temp_directory_path() / fmt::format("seer-s3-predictor-{}.bin", ::getpid());
    S3Workload w = prepare_s3_workload(*o, scratch.string());
    auto rows = run_s3_experiment(*o, w, [](const S3Row& r) {
      std::fprintf(stderr, "%s\n",
                   fmt::format("{:<13} {:<10} {:>9.0f} tokens/s  mean batch {:>7.1f}  ({:.1f} s)", r.model, r.policy,
                               r.summary.output_tokens_per_s, r.summary.batch_size.mean, r.wall_s)
                       .c_str());
    });
    std::error_code ignored;
    std::filesystem::remove(scratch, ignored);
    const std::string table = s3_table_markdown(*o, w, rows);
    write_file(*out + "/s3.md", table);
    write_file(*out + "/s3.svg", s3_chart_svg(*o, rows));
    write_file(*out + "/s3.json", s3_rows_json(*o, w, rows).dump(2) + "\n");
    std::printf("%s", table.c_str());
    std::fprintf(stderr, "wrote %s/s3.md, s3.svg and s3.json\n", out->c_str());
    rc = 0;
  });
}

}  // namespace

void add_experiment(CLI::App& app, int& rc) { add_s3_experiment(app, rc); }

}  // namespace seer::cli
