#include "runtime/model_bench.h"

#include <algorithm>
#include <chrono>
#include <memory>
#include <random>

#include "backend/cpu_backend.h"
#include "common/error.h"
#include "model/model_file.h"

namespace seer {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// A backend whose pool holds `sequences` sequences of `tokens` each, block tables
// laid out one after another.
struct Bench {
  std::unique_ptr<Backend> backend;
  std::vector<ForwardSequence> seqs;
  std::vector<float> logits;
  std::mt19937_64 rng;
  int vocab;

  Bench(const ModelFile& model, const ModelBenchOptions& o, int sequences, int tokens) : rng(o.seed) {
    CpuBackendOptions bo;
    bo.threads = o.threads;
    bo.kv.type = o.kv_type;
    const int per_seq = (tokens + bo.kv.block_size - 1) / bo.kv.block_size;
    bo.kv.device_blocks = per_seq * sequences;
    backend = make_cpu_backend(model, bo);
    vocab = backend->vocab_size();
    seqs.resize(static_cast<size_t>(sequences));
    for (int s = 0; s < sequences; ++s)
      for (int b = 0; b < per_seq; ++b) seqs[static_cast<size_t>(s)].block_table.push_back(s * per_seq + b);
  }
  int32_t token() { return static_cast<int32_t>(rng() % static_cast<uint64_t>(vocab)); }

  // Prompts of `n` tokens for every sequence, in passes of at most 2048 tokens (as
  // llama.cpp's default n_batch); logits of each prompt's last token.
  double prefill(int n) {
    const auto t0 = Clock::now();
    ForwardBatch b;
    b.sequences = seqs;
    auto flush = [&] {
      if (b.size() == 0) return;
      backend->forward(b, logits);
      b.tokens.clear();
      b.positions.clear();
      b.seq_index.clear();
      b.logit_rows.clear();
    };
    for (int s = 0; s < static_cast<int>(seqs.size()); ++s)
      for (int p = 0; p < n; ++p) {
        b.add(s, token(), p, p == n - 1);
        if (b.size() == 2048) flush();
      }
    flush();
    return since(t0);
  }

  // `steps` steps decoding one token of every sequence, from position `start`.
  double decode(int start, int steps) {
    const auto t0 = Clock::now();
    for (int i = 0; i < steps; ++i) {
      ForwardBatch b;
      b.sequences = seqs;
      for (int s = 0; s < static_cast<int>(seqs.size()); ++s) b.add(s, token(), start + i, true);
      backend->forward(b, logits);
    }
    return since(t0);
  }
};

}  // namespace

std::vector<ModelBenchRow> bench_model(const ModelFile& model, const ModelBenchOptions& o,
                                       const ModelBenchProgress& progress) {
  if (o.pp < 0 || o.tg < 0 || o.batched_prompt < 1 || o.batched_gen < 1 || o.repeats < 1)
    fail("bench model: token counts must be positive and --repeats >= 1");
  const int ctx = model.config().context_length;
  std::vector<ModelBenchRow> rows;
  auto note = [&](const std::string& s) {
    if (progress) progress(s);
  };
  if (o.pp > 0 || o.tg > 0) {
    if (std::max(o.pp, o.tg) > ctx) fail("bench model: {} tokens exceed the context length {}", std::max(o.pp, o.tg), ctx);
    Bench b(model, o, 1, std::max({o.pp, o.tg, 16}));
    (void)b.decode(0, 4);  // warm-up: threads started, weights touched
    if (o.pp > 0) {
      note("pp" + std::to_string(o.pp));
      double best = 1e300;
      for (int r = 0; r < o.repeats; ++r) best = std::min(best, b.prefill(o.pp));
      rows.push_back({"pp" + std::to_string(o.pp), 1, o.pp, 0, o.pp / best, 0});
    }
    if (o.tg > 0) {
      note("tg" + std::to_string(o.tg));
      double best = 1e300;
      for (int r = 0; r < o.repeats; ++r) best = std::min(best, b.decode(0, o.tg));
      rows.push_back({"tg" + std::to_string(o.tg), 1, 0, o.tg, 0, o.tg / best});
    }
  }
  for (int par : o.parallel) {
    if (par < 1) fail("bench model: --parallel values must be >= 1, got {}", par);
    if (o.batched_prompt + o.batched_gen > ctx)
      fail("bench model: {} + {} tokens exceed the context length {}", o.batched_prompt, o.batched_gen, ctx);
    note("batched " + std::to_string(par));
    Bench b(model, o, par, o.batched_prompt + o.batched_gen);
    (void)b.decode(0, 1);  // warm-up, overwritten by the prefill
    const double t_pp = b.prefill(o.batched_prompt);
    const double t_tg = b.decode(o.batched_prompt, o.batched_gen);
    rows.push_back({"batched", par, o.batched_prompt, o.batched_gen, par * o.batched_prompt / t_pp,
                    par * o.batched_gen / t_tg});
  }
  return rows;
}

}  // namespace seer
