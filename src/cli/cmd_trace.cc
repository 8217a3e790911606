// `seer trace`: writes a request trace (JSONL, sim/trace.h) from a synthetic
// generator or one of the datasets of ../shared/data.
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "predict/predictor_file.h"
#include "sim/datasets.h"
#include "sim/trace_generator.h"

namespace seer::cli {
namespace {

// The split seed of the training run that wrote `file`, after checking that it
// trained on the text `lengths` draws from.
uint64_t held_out_split_seed(const std::string& file, const std::string& lengths) {
  const std::string expected = labeled_dataset_of(lengths);
  if (expected.empty())
    fail("--held-out-of applies to --lengths alpaca and sharegpt-chat (got --lengths {})", lengths);
  const PredictorFile f = load_predictor_file(file);
  const std::string dataset = f.notes.value("dataset", std::string());
  if (dataset != expected)
    fail("--held-out-of {}: the predictor was trained on '{}', --lengths {} draws from '{}'", file,
         dataset.empty() ? "an unnamed dataset" : dataset, lengths, expected);
  if (!f.notes.contains("split_seed") || !f.notes["split_seed"].is_number_unsigned())
    fail("--held-out-of {}: the file does not record its split seed (train it with `seer predict train`)", file);
  return f.notes["split_seed"].get<uint64_t>();
}

}  // namespace

void add_trace(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("trace", "Write a request trace (JSONL) from a generator or dataset");
  struct Opts {
    TraceGeneratorOptions gen;
    std::string out, arrival = "poisson", dist = "lognormal", held_out_of;
  };
  auto o = std::make_shared<Opts>();
  cmd->add_option("--out", o->out, "Output file ('-' for stdout)")->required();
  cmd->add_option("--num", o->gen.num, "Number of requests (turns for sharegpt-multiturn)")->capture_default_str();
  cmd->add_option("--rate", o->gen.arrivals.rate,
                  "Mean arrival rate in requests/s (conversations/s for sharegpt-multiturn); splitwise traces keep "
                  "their recorded times unless given");
  cmd->add_option("--arrival", o->arrival, "Arrival process: poisson or gamma")->capture_default_str();
  cmd->add_option("--burstiness", o->gen.arrivals.burstiness,
                  "Gamma shape: inter-arrival CV^2 = 1/burstiness (1 = Poisson, < 1 burstier)")
      ->capture_default_str();
  std::string lengths_help = "Lengths: synthetic, or a dataset (needs --data-dir):";
  for (const auto& n : dataset_names()) lengths_help += " " + n;
  lengths_help += ", or mixed (chat + qa + long classes with per-class SLOs, docs/seer-policy.md)";
  cmd->add_option("--lengths", o->gen.lengths, lengths_help)->capture_default_str();
  cmd->add_option("--data-dir", o->gen.data_dir, "Folder holding length-traces/, alpaca/ and sharegpt/ (../shared/data)");
  cmd->add_option("--length-dist", o->dist, "Synthetic lengths: lognormal, uniform or constant")->capture_default_str();
  cmd->add_option("--prompt-mean", o->gen.synthetic.prompt_mean, "Synthetic mean prompt tokens")->capture_default_str();
  cmd->add_option("--output-mean", o->gen.synthetic.output_mean, "Synthetic mean output tokens")->capture_default_str();
  cmd->add_option("--length-sigma", o->gen.synthetic.sigma, "Log-normal shape (std-dev of log length)")
      ->capture_default_str();
  cmd->add_option("--prompt-max", o->gen.synthetic.prompt_max, "Synthetic prompt cap")->capture_default_str();
  cmd->add_option("--output-max", o->gen.synthetic.output_max, "Synthetic output cap")->capture_default_str();
  cmd->add_option("--think-mean", o->gen.think_mean_s, "Multi-turn: mean user think time (s), exponential")
      ->capture_default_str();
  cmd->add_option("--duration", o->gen.duration_s,
                  "Multi-turn: conversations arrive for this many seconds and turns due later are cut (--num "
                  "then caps the turns); 0: --num turns")
      ->capture_default_str();
  cmd->add_option("--slo-ttft", o->gen.slo.ttft_s, "Attach a TTFT SLO (s) to every request");
  cmd->add_option("--slo-tbt", o->gen.slo.tbt_s, "Attach a TBT SLO (s) to every request");
  cmd->add_option("--slo-deadline", o->gen.slo.deadline_s, "Attach an end-to-end deadline (s) to every request");
  cmd->add_option("--seed", o->gen.seed, "Random seed")->capture_default_str();
  cmd->add_option("--held-out-of", o->held_out_of,
                  "alpaca, sharegpt-chat: draw only prompts this predictor file (`seer predict train`) did not "
                  "train on, so a simulation measures it on unseen prompts");
  cmd->callback([o, &rc] {
    o->gen.arrivals.process = parse_arrival_process(o->arrival);
    o->gen.synthetic.dist = parse_length_distribution(o->dist);
    o->gen.progress = true;
    if (!o->held_out_of.empty()) o->gen.held_out_split_seed = held_out_split_seed(o->held_out_of, o->gen.lengths);
    auto trace = generate_trace(o->gen);
    if (o->out == "-")
      write_trace(std::cout, trace);
    else
      write_trace_file(o->out, trace);
    double prompt = 0, output = 0;
    for (const auto& e : trace) {
      prompt += e.prompt_len();
      output += e.output_tokens;
    }
    const double n = static_cast<double>(trace.size());
    std::fprintf(stderr, "%s\n",
                 fmt::format("wrote {} requests to {}: {:.2f} req/s over {:.1f} s, mean prompt {:.0f} tokens, "
                             "mean output {:.0f} tokens",
                             trace.size(), o->out == "-" ? "stdout" : o->out, mean_arrival_rate(trace),
                             trace.back().arrival_s - trace.front().arrival_s, prompt / n, output / n)
                     .c_str());
    rc = 0;
  });
}

}  // namespace seer::cli
