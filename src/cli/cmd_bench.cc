#include <cstdio>
#include <cstdlib>
#include <memory>

#include <nlohmann/json.hpp>

#include "bench/bench_command.h"
#include "bench/capacity_command.h"
#include "cli/commands.h"
#include "common/error.h"
#include "kernels/kernel_level.h"
#include "model/model_file.h"
#include "runtime/model_bench.h"

namespace seer::cli {

namespace {

void add_bench_capacity(CLI::App* bench, int& rc) {
  auto* cmd = bench->add_subcommand(
      "capacity",
      "Highest request rate a live server sustains with P99 TBT <= X and median TTFT (the client's bound on the "
      "scheduling delay) <= --max-sched-delay: the bisection of `seer sim capacity`, each step replaying the trace "
      "at one rate with prompts of its own (fresh token ids; text prompts prefixed '(probe N) '), so that no "
      "step is served from the prefix cache of another");
  auto o = std::make_shared<bench::CapacityCommandOptions>();
  if (const char* key = std::getenv("OPENAI_API_KEY")) o->api_key = key;
  cmd->add_option("--url", o->url, "Server address")->capture_default_str();
  cmd->add_option("--trace", o->trace, "JSONL trace (see `seer trace`); its arrivals are rescaled to each rate")
      ->required();
  cmd->add_option("--num", o->num, "Use only the first N requests of the trace")->check(CLI::PositiveNumber);
  cmd->add_option("--slo-tbt-p99", o->criteria.tbt_p99_s, "P99 TBT bound (s)")->required();
  cmd->add_option("--max-sched-delay", o->criteria.sched_delay_p50_s, "Median scheduling delay (TTFT) bound (s)")
      ->capture_default_str();
  cmd->add_option("--start-rate", o->start_rate, "First rate probed (req/s)")->capture_default_str()->check(
      CLI::PositiveNumber);
  cmd->add_option("--tolerance", o->tolerance, "Stop when the bracket is within this fraction")
      ->capture_default_str()
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-steps", o->max_steps, "Probes at most (bounds the run time)")->capture_default_str();
  cmd->add_option("--max-concurrency", o->max_concurrency, "Most requests in flight at once (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--model", o->model, "Model name to send (default: the first of GET /v1/models)");
  cmd->add_option("--endpoint", o->endpoint, "completions or chat")->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "Seconds before a request is given up (counts as failed)")
      ->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "Bearer token (default: $OPENAI_API_KEY)");
  cmd->add_option("--token-id-max", o->token_id_max,
                  "Prompts given as a token count are sent as random token ids below this")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of generated prompts")->capture_default_str();
  cmd->add_flag("--json", o->json, R"(Print {"capacity_rps", "steps": [...]} instead of the table)");
  cmd->add_flag("!--no-progress", o->progress, "No progress bar");
  cmd->callback([o, &rc] { rc = bench::run_capacity(*o); });
}

struct ModelBenchArgs {
  std::string model;
  ModelBenchOptions opts;
  std::string kv_type = kv_type_name(kDefaultKvType);
  bool json = false;
};

int run_bench_model(ModelBenchArgs& a) {
  a.opts.kv_type = parse_kv_type(a.kv_type);
  auto model = ModelFile::open(a.model);
  const auto rows = bench_model(*model, a.opts, [](const std::string& what) {
    std::fprintf(stderr, "bench model: %s ...\n", what.c_str());
  });
  const CpuSummary cpu = cpu_summary();
  if (a.json) {
    for (const auto& r : rows)
      std::printf("{\"test\": \"%s\", \"parallel\": %d, \"prompt_tokens\": %d, \"gen_tokens\": %d, "
                  "\"prompt_tokens_per_s\": %.2f, \"gen_tokens_per_s\": %.2f, \"cpu\": %s, \"kernel_level\": \"%s\"}\n",
                  r.test.c_str(), r.parallel, r.prompt_tokens, r.gen_tokens, r.prompt_tokens_per_s, r.gen_tokens_per_s,
                  nlohmann::json(cpu.model).dump().c_str(), cpu.level.c_str());
    return 0;
  }
  std::printf("%s\n\n", cpu_summary_line().c_str());
  std::printf("| %-8s | %4s | %6s | %6s | %10s | %10s |\n", "test", "B", "PP", "TG", "S_PP t/s", "S_TG t/s");
  std::printf("|----------|------|--------|--------|------------|------------|\n");
  for (const auto& r : rows)
    std::printf("| %-8s | %4d | %6d | %6d | %10.2f | %10.2f |\n", r.test.c_str(), r.parallel, r.prompt_tokens,
                r.gen_tokens, r.prompt_tokens_per_s, r.gen_tokens_per_s);
  return 0;
}

void add_bench_model(CLI::App* bench, int& rc) {
  auto* cmd = bench->add_subcommand(
      "model",
      "Forward-pass speed of a model file on this CPU, measured as llama.cpp's llama-bench (pp N, tg N) and "
      "llama-batched-bench (B sequences of --npp prompt tokens, then --ntg decode steps) measure theirs");
  auto a = std::make_shared<ModelBenchArgs>();
  cmd->add_option("--model,-m", a->model, "GGUF model file")->required();
  cmd->add_option("-p,--pp", a->opts.pp, "Prompt tokens of the pp case (0: none)")->capture_default_str();
  cmd->add_option("-n,--tg", a->opts.tg, "Tokens of the tg case (0: none)")->capture_default_str();
  cmd->add_option("--npp", a->opts.batched_prompt, "Prompt tokens per sequence of the batched cases")
      ->capture_default_str();
  cmd->add_option("--ntg", a->opts.batched_gen, "Decode steps of the batched cases")->capture_default_str();
  cmd->add_option("--npl", a->opts.parallel, "Sequences of each batched case (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  cmd->add_option("--repeats,-r", a->opts.repeats, "pp and tg: best of this many runs")->capture_default_str();
  cmd->add_option("--threads,-t", a->opts.threads, "Threads (0: all cores)")->capture_default_str();
  cmd->add_option("--kv-type", a->kv_type, kKvTypeHelp)->capture_default_str();
  cmd->add_flag("--json", a->json,
                R"(One JSON object per case: {"test", "parallel", "prompt_tokens", "gen_tokens", "prompt_tokens_per_s", "gen_tokens_per_s"})");
  cmd->callback([a, &rc] { rc = run_bench_model(*a); });
}

}  // namespace

void add_bench(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "bench",
      "Benchmark any OpenAI-compatible server (seer, llama.cpp's llama-server, vLLM) with a trace or dataset: "
      "streaming requests forced to the trace's output lengths (ignore_eos + max_tokens); TTFT, TBT, end-to-end "
      "and normalized latency, throughput and SLO attainment with the names of `seer sim --json`");
  auto o = std::make_shared<bench::BenchCommandOptions>();
  if (const char* key = std::getenv("OPENAI_API_KEY")) o->api_key = key;
  cmd->add_option("--url", o->url, "Server address (loopback by default)")->capture_default_str();
  auto* trace = cmd->add_option("--trace", o->trace, "JSONL trace (see `seer trace`)");
  auto* dataset = cmd->add_option("--dataset", o->dataset,
                                  "Dataset: synthetic, sharegpt, arxiv, splitwise-conv, splitwise-code, alpaca, "
                                  "sharegpt-multiturn");
  trace->excludes(dataset);
  cmd->add_option("--data-dir", o->data_dir, "Folder holding length-traces/, alpaca/, sharegpt/ (for --dataset)");
  cmd->add_option("--rate", o->rate,
                  "Requests (conversations with --multi-turn) per second, or inf for all at once; default: the "
                  "trace's own arrival times (a dataset without times: all at once)");
  cmd->add_option("--num", o->num, "Number of requests (turns)")->check(CLI::PositiveNumber);
  cmd->add_option("--burstiness", o->burstiness,
                  "With --rate: gamma arrivals of this shape (1 = Poisson, < 1 burstier) instead of rescaling the "
                  "trace's times")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--max-concurrency", o->max_concurrency, "Most requests in flight at once (0: no limit)")
      ->capture_default_str();
  cmd->add_option("--model", o->model, "Model name to send (default: the first of GET /v1/models)");
  cmd->add_option("--endpoint", o->endpoint, "completions or chat (multi-turn always uses chat)")
      ->capture_default_str();
  cmd->add_flag("--multi-turn", o->multi_turn,
                "Replay conversations: each turn is sent after the previous answer plus the think time");
  cmd->add_option("--think-time", o->think_time_s, "Seconds between an answer and the next turn (overrides the trace)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--stateful", o->stateful,
                "Multi-turn: send only the new message plus the conversation id (seer, Pensieve-style) instead of "
                "the whole history");
  cmd->add_option("--temperature", o->temperature, "Sampling temperature")->capture_default_str();
  cmd->add_option("--timeout", o->timeout_s, "Seconds before a request is given up")->capture_default_str();
  cmd->add_option("--api-key", o->api_key, "Bearer token (default: $OPENAI_API_KEY)");
  cmd->add_option("--label", o->label, "Name of the run in the summary (default: the server's policy)");
  cmd->add_option("--slo-ttft", o->slo.ttft_s, "TTFT SLO in seconds for requests without their own");
  cmd->add_option("--slo-tbt", o->slo.tbt_s, "TBT SLO in seconds for requests without their own");
  cmd->add_option("--slo-deadline", o->slo.deadline_s, "End-to-end SLO in seconds for requests without their own");
  cmd->add_option("--token-id-max", o->token_id_max,
                  "Prompts given as a token count are sent as random token ids below this")
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Seed of generated arrivals and prompts")->capture_default_str();
  cmd->add_flag("--json", o->json, "Print one JSON object (the keys of `seer sim --json`) instead of the table");
  cmd->add_option("--plot", o->plot, "Write latency CDFs to this SVG file");
  cmd->add_flag("!--no-progress", o->progress, "No progress bar");
  add_bench_capacity(cmd, rc);
  add_bench_model(cmd, rc);
  cmd->callback([o, cmd, &rc] {
    if (!cmd->get_subcommands().empty()) return;  // `bench capacity` or `bench model` ran
    rc = bench::run_bench(*o);
  });
}

}  // namespace seer::cli
