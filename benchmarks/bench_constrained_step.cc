// bench_constrained_step: what constrained decoding adds to a decode step of a real
// model, and how much of it the executor hides behind the forward pass. B requests
// decode (prompt 32 tokens, up to 96 output tokens, temperature 0.8, seeded), each
// finished request replaced by a new one; every request of the constrained runs is
// under the typical JSON schema (typical_schema.h). Two executors, each with and
// without constraints, run in turn on the same model and forward threads:
//   serial  : the executor as it was: masks computed in the sampling loop after the
//             forward pass, requests sampled one after another
//             (GrammarMasks::AfterForwardPass, 1 sampling thread);
//   overlap : seer's default: masks computed on a second thread while the forward
//             pass runs, requests sampled on --sampling-threads threads.
// Each constrained run starts from a fresh compiled grammar ("cold": its first steps
// walk the vocabulary trie for every state they meet) and then keeps it ("warm").
// Reported per step: mean executor time (IterationStats::elapsed_s) over the warm
// steps that decode every request (a replacement's prefill step is left out), what constraints add to it for each executor, and the means over the first
// --cold-steps steps. Usage: bench_constrained_step --model F [--batches 1,8,32]
//   [--steps 60] [--cold-steps 20] [--threads 2] [--sampling-threads 2] [--repeats 3] [--json]
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "engine/engine.h"
#include "grammar/grammar_cache.h"
#include "grammar/json_schema_to_gbnf.h"
#include "kv/kv_manager.h"
#include "model/gguf_file.h"
#include "model/model_file.h"
#include "runtime/model_executor.h"
#include "scheduler/scheduler.h"
#include "tokenizer/tokenizer.h"

#include "bench_args.h"
#include "typical_schema.h"

namespace seer {
namespace {

constexpr int32_t kPrompt = 32;
constexpr int32_t kMaxOutput = 96;

class Replacer final : public EngineObserver {
 public:
  void on_finished(const Request&) override { ++finished; }
  int finished = 0;
};

struct Run {
  double cold_ms = 0;  // mean step over the first cold_steps
  double warm_ms = 0;  // mean step over the rest
};

struct Setup {
  const ModelFile& model;
  const Tokenizer& tok;
  int threads;
  int steps;
  int cold_steps;
  int sampling_threads;
};

Run run(const Setup& s, int batch, bool constrained, HostWork host) {
  const int32_t block_size = 16;
  const int32_t device_blocks = 2 * batch * ((kPrompt + kMaxOutput) / block_size + 1) + 16;
  CpuBackendOptions o;
  o.kv.block_size = block_size;
  o.kv.device_blocks = device_blocks;
  o.threads = s.threads;
  auto backend = make_cpu_backend(s.model, o);
  ModelExecutor executor(*backend, 1, host);
  KvManager kv(KvConfig{block_size, device_blocks, 0, 0});
  SchedulerConfig sc;
  sc.policy = "vllm";
  sc.max_batch_size = batch;
  auto scheduler = make_scheduler(sc);
  WallClock clock;
  EngineConfig ec;
  ec.max_model_len = kPrompt + kMaxOutput;
  ec.check_invariants = false;
  Engine engine(*scheduler, executor, kv, clock, ec);
  Replacer replacer;
  engine.add_observer(&replacer);
  // A fresh cache per run: the cold steps pay the trie walks.
  grammar::GrammarCache grammars([&tok = s.tok] {
    std::vector<std::string> bytes(static_cast<size_t>(tok.vocab_size()));
    for (int32_t id = 0; id < tok.vocab_size(); ++id) bytes[id] = tok.token_bytes(id);
    return std::make_shared<const grammar::TokenTrie>(bytes, tok.end_of_generation_ids());
  });
  const std::string gbnf = grammar::json_schema_to_gbnf(nlohmann::ordered_json::parse(bench::kSchema));
  std::mt19937 rng(42);
  uint64_t seed = 1;
  auto add = [&] {
    Request r;
    for (int32_t i = 0; i < kPrompt; ++i) r.prompt_tokens.push_back(static_cast<int32_t>(3 + rng() % 200));
    r.sampling.temperature = 0.8f;
    r.sampling.seed = seed++;
    r.sampling.max_tokens = kMaxOutput;
    if (constrained) r.sampling.grammar = grammars.get(gbnf);
    engine.add_request(std::move(r));
  };
  for (int i = 0; i < batch; ++i) add();
  // The prompts first: the measured steps are decode steps.
  while (engine.step().num_tokens > batch) {
  }
  // Only steps that decode every request count: a replacement's prefill would weigh
  // on whichever run finishes more requests (a grammar ends its JSON early).
  Run out;
  int cold = 0, warm = 0;
  for (int i = 0; cold + warm < s.steps; ++i) {
    const IterationStats st = engine.step();
    for (; replacer.finished > 0; --replacer.finished) add();
    if (st.num_tokens != batch || st.batch_size != batch) continue;
    const bool is_cold = i < s.cold_steps;
    (is_cold ? out.cold_ms : out.warm_ms) += st.elapsed_s * 1e3;
    ++(is_cold ? cold : warm);
  }
  out.cold_ms /= std::max(1, cold);
  out.warm_ms /= std::max(1, warm);
  return out;
}

int main_impl(int argc, char** argv) {
  std::vector<int> batches = {1, 8, 32};
  std::string model_path;
  int steps = 60, cold_steps = 20, threads = 2, sampling_threads = 2, repeats = 3;
  bool json = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "%s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--model") model_path = next();
    else if (a == "--batches") {
      batches.clear();
      for (const auto& b : bench_args::split(next())) batches.push_back(std::stoi(b));
    } else if (a == "--steps") steps = std::stoi(next());
    else if (a == "--cold-steps") cold_steps = std::stoi(next());
    else if (a == "--threads") threads = std::stoi(next());
    else if (a == "--sampling-threads") sampling_threads = std::stoi(next());
    else if (a == "--repeats") repeats = std::stoi(next());
    else if (a == "--json") json = true;
    else {
      std::fprintf(stderr, "unknown option %s\n", a.c_str());
      return 2;
    }
  }
  if (model_path.empty() || cold_steps >= steps) {
    std::fprintf(stderr, "usage: bench_constrained_step --model F [--batches 1,8,32] [--steps 60] [--cold-steps 20] "
                         "[--threads 2] [--sampling-threads 2] [--repeats 3] [--json] (cold steps < steps)\n");
    return 2;
  }
  auto model = ModelFile::open(model_path);
  auto tok = tokenizer_from_gguf(*GgufFile::open(model_path));
  const Setup setup{*model, *tok, threads, steps, cold_steps, sampling_threads};
  FILE* table = json ? stderr : stdout;
  std::fprintf(table, "# %s, vocabulary %d, %d forward threads, %d sampling threads; ms per decode step, best of %d runs\n",
               model_path.c_str(), tok->vocab_size(), threads, sampling_threads, repeats);
  std::fprintf(table, "%5s | %9s %9s %8s %9s | %9s %9s %8s %9s\n", "batch", "serial", "+schema", "added", "cold",
               "overlap", "+schema", "added", "cold");
  const HostWork serial{GrammarMasks::AfterForwardPass, 1}, overlap{GrammarMasks::WithForwardPass, sampling_threads};
  for (int batch : batches) {
    Run best[4];  // serial free, serial constrained, overlap free, overlap constrained
    for (int rep = 0; rep < repeats; ++rep)
      for (int k = 0; k < 4; ++k) {  // in turn, so a busy spell hits all alike
        const Run r = run(setup, batch, k % 2 == 1, k < 2 ? serial : overlap);
        if (rep == 0 || r.warm_ms < best[k].warm_ms) best[k].warm_ms = r.warm_ms;
        if (rep == 0 || r.cold_ms < best[k].cold_ms) best[k].cold_ms = r.cold_ms;
      }
    const double serial_pct = 100 * (best[1].warm_ms / best[0].warm_ms - 1);
    const double overlap_pct = 100 * (best[3].warm_ms / best[2].warm_ms - 1);
    std::fprintf(table, "%5d | %9.3f %9.3f %7.1f%% %9.3f | %9.3f %9.3f %7.1f%% %9.3f\n", batch, best[0].warm_ms,
                 best[1].warm_ms, serial_pct, best[1].cold_ms, best[2].warm_ms, best[3].warm_ms, overlap_pct,
                 best[3].cold_ms);
    if (json)
      std::printf("%s\n", nlohmann::json{{"batch", batch}, {"threads", threads}, {"sampling_threads", sampling_threads},
                                         {"vocab", tok->vocab_size()}, {"serial_free_ms", best[0].warm_ms},
                                         {"serial_schema_ms", best[1].warm_ms}, {"serial_added_pct", serial_pct},
                                         {"serial_schema_cold_ms", best[1].cold_ms}, {"overlap_free_ms", best[2].warm_ms},
                                         {"overlap_schema_ms", best[3].warm_ms}, {"overlap_added_pct", overlap_pct},
                                         {"overlap_schema_cold_ms", best[3].cold_ms}}
                              .dump()
                              .c_str());
  }
  return 0;
}

}  // namespace
}  // namespace seer

int main(int argc, char** argv) {
  try {
    return seer::main_impl(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_constrained_step: %s\n", e.what());
    return 1;
  }
}
