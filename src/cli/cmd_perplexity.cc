// seer perplexity: the model's perplexity over a text file, computed as llama.cpp's
// llama-perplexity does (runtime/perplexity.h), so the two can be compared number
// for number on the same file.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "cli/commands.h"
#include "cli/model_loading.h"
#include "common/error.h"
#include "model/model_file.h"
#include "runtime/perplexity.h"

namespace seer::cli {
namespace {

struct PerplexityArgs {
  std::string model;
  std::string tokenizer;
  std::string file;
  int ctx = 512;
  int chunks = -1;
  int batch = 512;
  int threads = 0;
  std::string kv_type = kv_type_name(kDefaultKvType);
  bool json = false;
};

// The whole file, less one trailing newline (as llama-perplexity reads -f).
std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("cannot open {}", path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!text.empty() && text.back() == '\n') text.pop_back();
  return text;
}

int run_perplexity(const PerplexityArgs& a) {
  if (a.ctx < 4) fail("--ctx must be at least 4, got {}", a.ctx);
  const std::string text = read_text(a.file);
  auto model = ModelFile::open(a.model);
  const ModelConfig& cfg = model->config();
  if (a.ctx > cfg.context_length) fail("--ctx {} exceeds the model's context length of {}", a.ctx, cfg.context_length);
  auto tok = load_tokenizer(*model, a.tokenizer);
  const std::vector<int32_t> tokens = tok->encode(text, /*add_special=*/true);

  CpuBackendOptions bo;
  bo.threads = a.threads;
  bo.kv.type = parse_kv_type(a.kv_type);
  bo.kv.device_blocks = (a.ctx + bo.kv.block_size - 1) / bo.kv.block_size;
  auto backend = make_cpu_backend(*model, bo);
  prefault(model->weights());

  PerplexityOptions po;
  po.ctx = a.ctx;
  po.chunks = a.chunks;
  po.batch = a.batch;
  po.bos = tok->add_bos() ? tok->bos_id() : -1;
  const int chunks = a.chunks < 0 ? static_cast<int>(tokens.size() / a.ctx)
                                   : std::min(a.chunks, static_cast<int>(tokens.size() / a.ctx));
  std::fprintf(stderr, "perplexity: %zu tokens, ctx %d, %d chunks, batch %d, %d threads\n", tokens.size(), a.ctx,
               chunks, a.batch, static_cast<CpuBackend&>(*backend).threads());
  const auto t0 = std::chrono::steady_clock::now();
  const PerplexityResult r = perplexity(*backend, tokens, po, [](int c, int, double running) {
    std::fprintf(stderr, "[%d]%.4f,", c + 1, running);
    std::fflush(stderr);
  });
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "\nFinal estimate: PPL = %.4f +/- %.5f (%lld tokens scored in %.1f s)\n", r.perplexity,
               r.stderr_ppl, static_cast<long long>(r.scored), secs);
  if (a.json) {
    nlohmann::json j = {{"perplexity", r.perplexity}, {"stderr", r.stderr_ppl}, {"chunks", r.running},
                        {"ctx", r.ctx},               {"tokens", r.tokens},     {"scored", r.scored}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("%.4f\n", r.perplexity);
  }
  return 0;
}

}  // namespace

void add_perplexity(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "perplexity", "Perplexity of a model over a text file, computed as llama.cpp's llama-perplexity does");
  auto a = std::make_shared<PerplexityArgs>();
  cmd->add_option("--model,-m", a->model, "GGUF or llama2.c model file")->required();
  cmd->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer.bin (for llama2.c checkpoints)");
  cmd->add_option("--file,-f", a->file, "Text file (one trailing newline is dropped, as llama-perplexity does)")
      ->required();
  cmd->add_option("--ctx,-c", a->ctx, "Tokens per chunk; the second half of each is scored")->capture_default_str();
  cmd->add_option("--chunks", a->chunks, "Chunks to evaluate (-1: all whole chunks)")->capture_default_str();
  cmd->add_option("--batch,-b", a->batch, "Tokens per forward pass")->capture_default_str();
  cmd->add_option("--threads,-t", a->threads, "Threads (0: all cores)")->capture_default_str();
  cmd->add_option("--kv-type", a->kv_type, kKvTypeHelp)->capture_default_str();
  cmd->add_flag("--json", a->json,
                "Print {\"perplexity\", \"stderr\", \"chunks\" (running perplexity after each), \"ctx\", \"tokens\", "
                "\"scored\"} on stdout");
  cmd->callback([a, &rc] { rc = run_perplexity(*a); });
}

}  // namespace seer::cli
