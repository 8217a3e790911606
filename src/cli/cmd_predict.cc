// `seer predict train|eval`: the trained output-length predictor (docs/predictor.md).
// Both use the same seeded 80/20 split of a dataset's prompts; eval scores the test
// split only, against the majority-bucket and training-mean baselines.
#include <chrono>
#include <cstdio>
#include <iostream>
#include <set>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "predict/length_trainer.h"
#include "predict/predictor_eval.h"
#include "predict/predictor_file.h"
#include "sim/labeled_datasets.h"

namespace seer::cli {
namespace {

struct Split {
  std::vector<LengthExample> train, test;
};

Split load_split(const std::string& data_dir, const std::string& dataset, uint64_t seed) {
  if (data_dir.empty()) fail("--data-dir is required (the folder holding alpaca/, sharegpt/ and tokenizer-tests/)");
  auto labeled = read_labeled_dataset(data_dir, dataset, true);
  const auto test_idx = test_split(labeled.size(), seed);
  std::set<size_t> is_test(test_idx.begin(), test_idx.end());
  Split s;
  for (size_t i = 0; i < labeled.size(); ++i)
    (is_test.count(i) ? s.test : s.train).push_back({std::move(labeled[i].prompt), labeled[i].output_tokens});
  if (s.train.empty() || s.test.empty()) fail("--dataset {}: too few prompts for an 80/20 split", dataset);
  return s;
}

struct TrainArgs {
  std::string dataset = "alpaca", data_dir, out, kind = "fine-lr";
  int32_t buckets = 10, max_len = 2048;
  TrainOptions train;
};

void run_train(const TrainArgs& a) {
  if (a.out.empty()) fail("--out is required");
  TrainOptions o = a.train;
  o.kind = parse_model_kind(a.kind);
  o.max_len = a.max_len;
  o.buckets = LengthBuckets::equal(a.max_len, a.buckets);
  o.progress = true;
  const auto t0 = std::chrono::steady_clock::now();
  Split s = load_split(a.data_dir, a.dataset, o.seed);
  const auto t1 = std::chrono::steady_clock::now();
  PredictorFile f;
  f.model = train_length_model(s.train, o);
  const auto t2 = std::chrono::steady_clock::now();
  const double load_s = std::chrono::duration<double>(t1 - t0).count();
  const double train_s = std::chrono::duration<double>(t2 - t1).count();
  f.notes = {{"dataset", a.dataset}, {"split_seed", o.seed}, {"train_requests", s.train.size()},
             {"test_requests", s.test.size()}, {"epochs", o.epochs}, {"train_seconds", train_s}};
  save_predictor_file(a.out, f);
  std::fprintf(stderr, "%s\n",
               fmt::format("trained {} on {} {} prompts ({} held out) in {:.1f} s (+{:.1f} s reading and "
                           "tokenizing); {} buckets of {} tokens; wrote {}",
                           a.kind, s.train.size(), a.dataset, s.test.size(), train_s, load_s, o.buckets.count,
                           o.buckets.width, a.out)
                   .c_str());
}

struct EvalArgs {
  std::string predictor, dataset, data_dir, errors_out;
  int64_t seed = -1;
  bool json = false;
};

void print_table(const EvalReport& r) {
  auto row = [](const std::string& what, const std::string& model, const std::string& base) {
    std::printf("%-36s %12s %12s\n", what.c_str(), model.c_str(), base.c_str());
  };
  std::printf("%s: %lld test prompts, %d buckets of %d tokens\n\n", r.dataset.c_str(),
              static_cast<long long>(r.test_requests), r.buckets, r.bucket_width);
  row("", "predictor", "baseline");
  row("bucket accuracy", fmt::format("{:.4f}", r.accuracy), fmt::format("{:.4f}", r.baseline_majority_accuracy));
  row("bucket accuracy, 32-token buckets", fmt::format("{:.4f}", r.accuracy_width_32),
      fmt::format("{:.4f}", r.baseline_majority_accuracy_width_32));
  row("MAE (tokens)", fmt::format("{:.1f}", r.mae_tokens), fmt::format("{:.1f}", r.baseline_mean_mae_tokens));
  row("mean bucket distance (all / wrong)", fmt::format("{:.3f} / {:.2f}", r.mean_bucket_distance, r.mean_wrong_distance), "");
  row("predict time (ms, mean)", fmt::format("{:.4f}", r.predict_time_ms_mean), "");
  std::printf("\nbaselines: the most frequent training bucket; MAE of always predicting the training mean\n");
  std::printf("bucket offsets (predicted - true):");
  for (const auto& [off, n] : r.bucket_offsets) std::printf(" %+d:%lld", off, static_cast<long long>(n));
  std::printf("\n");
}

void run_eval(const EvalArgs& a) {
  if (a.predictor.empty()) fail("--predictor is required (a file from `seer predict train`)");
  PredictorFile f = load_predictor_file(a.predictor);
  const std::string dataset = !a.dataset.empty() ? a.dataset : f.notes.value("dataset", std::string("alpaca"));
  const uint64_t seed = a.seed >= 0 ? static_cast<uint64_t>(a.seed) : f.notes.value("split_seed", uint64_t{0});
  Split s = load_split(a.data_dir, dataset, seed);
  EvalReport r = evaluate_length_model(f.model, s.train, s.test, dataset);
  if (!a.errors_out.empty()) {
    save_error_distribution(a.errors_out,
                            error_distribution(r, fmt::format("seer predict eval --predictor {} --dataset {}: "
                                                              "{} buckets of {} tokens, accuracy {:.4f}",
                                                              a.predictor, dataset, r.buckets, r.bucket_width,
                                                              r.accuracy)));
    std::fprintf(stderr, "wrote the bucket error distribution to %s\n", a.errors_out.c_str());
  }
  if (a.json)
    std::cout << r.to_json().dump() << '\n';
  else
    print_table(r);
}

}  // namespace

void add_predict(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("predict", "Train and evaluate the output-length predictor (S3)");
  cmd->require_subcommand(1);
  const std::string datasets = "Dataset: alpaca or sharegpt";

  auto t = std::make_shared<TrainArgs>();
  auto* train = cmd->add_subcommand("train", "Train a length predictor on 80% of a dataset's prompts");
  train->add_option("--dataset", t->dataset, datasets)->capture_default_str();
  train->add_option("--data-dir", t->data_dir, "Folder holding alpaca/, sharegpt/, tokenizer-tests/ (../shared/data)")
      ->required();
  train->add_option("--out", t->out, "Predictor file to write")->required();
  train->add_option("--buckets", t->buckets, "Number of equal-width length buckets")->capture_default_str();
  train->add_option("--max-len", t->max_len, "Longest output length; buckets are max_len/buckets wide")
      ->capture_default_str();
  train->add_option("--seed", t->train.seed, "Seed of the 80/20 split and the training order")->capture_default_str();
  train->add_option("--model", t->kind, "fine-lr, bucket-lr or log-reg (docs/predictor.md)")->capture_default_str();
  train->add_option("--epochs", t->train.epochs, "Passes over the training split")->capture_default_str();
  train->add_option("--hash-bits", t->train.features.hash_bits, "log2 of the hashed feature slots")
      ->capture_default_str();
  train->add_option("--char-ngram", t->train.features.char_ngram, "Hashed character n-grams of words (0: off)")
      ->capture_default_str();
  train->add_option("--fine-classes", t->train.fine_classes, "fine-lr: number of log-spaced length classes")
      ->capture_default_str();
  train->callback([t, &rc] {
    run_train(*t);
    rc = 0;
  });

  auto e = std::make_shared<EvalArgs>();
  auto* eval = cmd->add_subcommand("eval", "Score a predictor on the held-out 20% of a dataset");
  eval->add_option("--predictor", e->predictor, "Predictor file from `seer predict train`")->required();
  eval->add_option("--dataset", e->dataset, datasets + " (default: the one it was trained on)");
  eval->add_option("--data-dir", e->data_dir, "Folder holding alpaca/, sharegpt/, tokenizer-tests/")->required();
  eval->add_option("--seed", e->seed, "Split seed (default: the one it was trained with)");
  eval->add_flag("--json", e->json, "One JSON object instead of a table");
  eval->add_option("--errors-out", e->errors_out,
                   "Also write the distribution of wrong-bucket offsets (what noisy:<accuracy> draws from)");
  eval->callback([e, &rc] {
    run_eval(*e);
    rc = 0;
  });
}

}  // namespace seer::cli
