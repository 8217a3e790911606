// seer generate: one prompt, straight on the CPU backend (no scheduler): prefill in
// chunks, then decode token by token (or, with --speculate ngram, verifying prompt-
// lookup drafts in each pass; docs/speculative.md), streaming text to stdout and the
// prefill and decode speeds to stderr.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "backend/cpu_backend.h"
#include "cli/commands.h"
#include "cli/knob_options.h"
#include "cli/model_loading.h"
#include "common/builtin_model.h"
#include "common/error.h"
#include "engine/draft_proposer.h"
#include "engine/speculation_gate.h"
#include "runtime/model_draft_proposer.h"
#include "model/gguf_file.h"
#include "model/model_file.h"
#include "sampling/sampler.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {
namespace {

struct GenerateArgs {
  std::string model;
  std::string tokenizer;
  std::string prompt;
  int n = 128;
  float temperature = 0.8f;
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.0f;
  std::optional<uint64_t> seed;
  bool ignore_eos = false;
  int threads = 0;
  int chunk = 512;
  std::string kv_type = kv_type_name(kDefaultKvType);
  StackKnobs knobs;  // --speculate, --draft-tokens, --speculate-gate as serve takes them
  std::string draft_model;  // --draft-model: drafts from a second model instead
};

const std::vector<std::string> kSpeculationKnobs = {"--speculate", "--draft-tokens", "--speculate-gate"};

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

SamplingParams sampling_params(const GenerateArgs& a) {
  SamplingParams sp;
  sp.temperature = a.temperature;
  sp.top_k = a.top_k;
  sp.top_p = a.top_p;
  sp.min_p = a.min_p;
  sp.repetition_penalty = a.repeat_penalty;
  sp.seed = a.seed;
  sp.max_tokens = a.n;
  sp.ignore_eos = a.ignore_eos;
  sp.validate();
  if (a.chunk < 1) fail("--chunk must be >= 1, got {}", a.chunk);
  check_stack_knobs(a.knobs);
  return sp;
}

// The loaded model, its tokenizer, the tokenized prompt and a backend whose KV pool
// holds exactly prompt + n tokens in one sequence.
struct Session {
  std::unique_ptr<ModelFile> model;
  std::unique_ptr<Tokenizer> tok;
  std::vector<int32_t> prompt;
  std::unique_ptr<Backend> backend;
  ForwardSequence seq;
};

Session open_session(const GenerateArgs& a) {
  const std::string model_path = model_or_builtin(a.model, "seer generate");
  const auto t_load = Clock::now();
  Session s;
  s.model = ModelFile::open(model_path);
  const ModelConfig& cfg = s.model->config();
  s.tok = load_tokenizer(*s.model, a.tokenizer);
  prefault(s.model->weights());
  s.prompt = s.tok->encode(a.prompt, /*add_special=*/true);
  if (s.prompt.empty()) fail("the prompt encodes to no tokens");
  const int64_t total = static_cast<int64_t>(s.prompt.size()) + a.n;
  if (total > cfg.context_length)
    fail("prompt ({} tokens) + -n {} = {} exceeds the model's context length of {}", s.prompt.size(), a.n, total,
         cfg.context_length);
  CpuBackendOptions bo;
  bo.threads = a.threads;
  bo.kv.type = parse_kv_type(a.kv_type);
  bo.kv.device_blocks = static_cast<int>((total + bo.kv.block_size - 1) / bo.kv.block_size);
  s.backend = make_cpu_backend(*s.model, bo);
  for (int b = 0; b < bo.kv.device_blocks; ++b) s.seq.block_table.push_back(b);
  std::fprintf(stderr, "model %s: %s, %d layers, dim %d, vocab %d; tokenizer %s; loaded in %.2f s\n",
               model_path.c_str(), cfg.arch.c_str(), cfg.n_layers, cfg.dim, cfg.vocab_size,
               s.tok->type_name().c_str(), seconds_since(t_load));
  return s;
}

// Prefill in chunks; only the last position's logits are wanted.
void prefill(Session& s, int chunk, std::vector<float>& logits) {
  for (size_t p0 = 0; p0 < s.prompt.size(); p0 += chunk) {
    ForwardBatch b;
    b.sequences.push_back(s.seq);
    const size_t p1 = std::min(s.prompt.size(), p0 + chunk);
    for (size_t p = p0; p < p1; ++p) b.add(0, s.prompt[p], static_cast<int32_t>(p), p + 1 == s.prompt.size());
    s.backend->forward(b, logits);
  }
}

struct DecodeStats {
  int passes = 0;
  int verify_passes = 0;  // passes that verified drafts
  int64_t drafted = 0, accepted = 0;
  int paused = 0;  // passes without drafts because the gate paused drafting
};

// Samples and streams up to `a.n` tokens; with a drafter, each pass also verifies
// the drafts proposed after the last token. `logits` holds one row per position
// fed last: the token's, then one after each draft. Each row is sampled in turn
// with the same history and draw as without drafts, and a draft is accepted while
// it equals the token sampled before it, so the output does not depend on them.
DecodeStats decode(Session& s, const GenerateArgs& a, Sampler& sampler, DraftProposer* drafter,
                   std::vector<float>& logits) {
  StreamDecoder decoder(*s.tok);
  const auto vocab = static_cast<size_t>(s.model->config().vocab_size);
  // Pauses drafting while it does not pay, fitting the pass cost as the engine does.
  SpeculationGate gate(SpeculationGateConfig{.enabled = a.knobs.speculate_gate == "adaptive"});
  Request::SpeculationWindow window;
  std::vector<int32_t> output, draft;
  int32_t draft_limit = drafter ? drafter->max_tokens() : 0;  // one more than last accepted
  DecodeStats st;
  for (bool done = false; !done;) {
    size_t i = 0;
    for (;; ++i) {
      const std::span<const float> row(logits.data() + i * vocab, vocab);
      const int32_t next = sampler.sample(row, s.prompt, output).token;
      if (!a.ignore_eos && s.tok->is_end_of_generation(next)) {
        done = true;
        break;
      }
      output.push_back(next);
      std::fputs(decoder.push(next).c_str(), stdout);
      std::fflush(stdout);
      if (static_cast<int>(output.size()) == a.n) {
        done = true;
        break;
      }
      if (i >= draft.size() || next != draft[i]) break;
    }
    if (!draft.empty()) {
      const auto accepted = static_cast<int32_t>(std::min(i, draft.size()));
      ++st.verify_passes;
      st.drafted += static_cast<int64_t>(draft.size());
      st.accepted += accepted;
      draft_limit = accepted + 1;
      gate.verified(window, static_cast<int32_t>(draft.size()), accepted);
    }
    if (done) break;
    draft.clear();
    const int32_t limit = std::min<int32_t>(draft_limit, a.n - static_cast<int32_t>(output.size()) - 1);
    if (drafter && limit > 0) {
      gate.set_draft_cost(drafter->seconds_per_draft());
      if (gate.may_draft(window))
        draft = drafter->propose(0, s.prompt, output, limit);
      else
        ++st.paused;
    }
    ForwardBatch b;
    b.sequences.push_back(s.seq);
    const auto pos = static_cast<int32_t>(s.prompt.size() + output.size() - 1);
    b.add(0, output.back(), pos, true);
    for (size_t d = 0; d < draft.size(); ++d) b.add(0, draft[d], pos + 1 + static_cast<int32_t>(d), true);
    const auto t0 = Clock::now();
    s.backend->forward(b, logits);
    if (drafter) gate.observe_decode_step(1, static_cast<int32_t>(b.tokens.size()), seconds_since(t0));
    ++st.passes;
  }
  std::fputs(decoder.flush().c_str(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  return st;
}

int run_generate(const GenerateArgs& a) {
  const SamplingParams sp = sampling_params(a);
  Session s = open_session(a);
  Sampler sampler(sp, sp.seed.value_or(static_cast<uint64_t>(Clock::now().time_since_epoch().count())));
  std::vector<float> logits;
  std::fputs(a.prompt.c_str(), stdout);
  std::fflush(stdout);

  const auto t_prefill = Clock::now();
  prefill(s, a.chunk, logits);
  const double prefill_s = seconds_since(t_prefill);
  const auto t_decode = Clock::now();
  std::unique_ptr<DraftProposer> drafter;
  ModelDraftProposer* model_drafter = nullptr;
  if (!a.draft_model.empty()) {
    if (a.knobs.speculate == "ngram") fail("--draft-model and --speculate ngram exclude each other");
    auto d = ModelDraftProposer::open(
        a.draft_model, *s.model,
        ModelDraftOptions{.max_tokens = a.knobs.draft_tokens, .slots = 1,
                          .slot_tokens = static_cast<int32_t>(s.prompt.size()) + a.n, .threads = a.threads,
                          .kv_type = parse_kv_type(a.kv_type)});
    model_drafter = d.get();
    drafter = std::move(d);
  } else if (a.knobs.speculate == "ngram") {
    drafter = std::make_unique<NgramDraftProposer>(a.knobs.draft_tokens);
  }
  const DecodeStats st = decode(s, a, sampler, drafter.get(), logits);
  const double decode_s = seconds_since(t_decode);
  // Tokens the passes computed: one each, and the accepted drafts.
  const int decoded = st.passes + static_cast<int>(st.accepted);
  std::fprintf(stderr, "prefill: %zu tokens in %.3f s (%.1f tok/s); decode: %d tokens in %.3f s (%.1f tok/s); %d threads\n",
               s.prompt.size(), prefill_s, s.prompt.size() / prefill_s, decoded, decode_s,
               decoded > 0 ? decoded / decode_s : 0.0, static_cast<CpuBackend&>(*s.backend).threads());
  if (drafter)
    std::fprintf(stderr,
                 "speculation %s: %d of %d passes verified drafts, %lld of %lld drafts accepted (%.0f %%), "
                 "%d passes paused by the gate\n",
                 drafter->name().c_str(), st.verify_passes, st.passes, static_cast<long long>(st.accepted),
                 static_cast<long long>(st.drafted), st.drafted > 0 ? 100.0 * st.accepted / st.drafted : 0.0,
                 st.paused);
  if (model_drafter)
    std::fprintf(stderr, "draft model %s: %lld forward passes over %lld tokens in %.3f s (%.1f %% of decode)\n",
                 model_drafter->model_path().c_str(), static_cast<long long>(model_drafter->forward_passes()),
                 static_cast<long long>(model_drafter->fed_tokens()), model_drafter->forward_seconds(),
                 decode_s > 0 ? 100.0 * model_drafter->forward_seconds() / decode_s : 0.0);
  return 0;
}

}  // namespace

void add_generate(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("generate", "Generate text from a prompt on the CPU backend");
  auto a = std::make_shared<GenerateArgs>();
  cmd->add_option("--model,-m", a->model, "GGUF or llama2.c model file (default: the built-in stories260K)");
  cmd->add_option("--tokenizer", a->tokenizer, "llama2.c tokenizer.bin (for llama2.c checkpoints)");
  cmd->add_option("--prompt,-p", a->prompt, "Prompt text")->required();
  cmd->add_option("-n,--max-tokens", a->n, "Tokens to generate")->capture_default_str();
  cmd->add_option("--temp,--temperature", a->temperature, "Temperature (0: greedy)")->capture_default_str();
  cmd->add_option("--top-k", a->top_k, "Top-k (0: off)")->capture_default_str();
  cmd->add_option("--top-p", a->top_p, "Top-p (nucleus)")->capture_default_str();
  cmd->add_option("--min-p", a->min_p, "Min-p")->capture_default_str();
  cmd->add_option("--repeat-penalty", a->repeat_penalty, "Repetition penalty over prompt and output (1: off)")
      ->capture_default_str();
  cmd->add_option("--seed", a->seed, "Random seed (default: from the clock)");
  cmd->add_flag("--ignore-eos", a->ignore_eos, "Keep generating past end-of-sequence tokens");
  cmd->add_option("--threads,-t", a->threads, "Threads (0: all cores)")->capture_default_str();
  cmd->add_option("--chunk", a->chunk, "Prefill chunk size in tokens")->capture_default_str();
  cmd->add_option("--kv-type", a->kv_type, kKvTypeHelp)->capture_default_str();
  add_knob_options(cmd, a->knobs, {}, kSpeculationKnobs);
  cmd->add_option("--draft-model", a->draft_model,
                  "Speculative decoding with a draft model: a smaller GGUF with the same tokenizer proposes "
                  "--draft-tokens per pass, greedy (docs/speculative.md)")
      ->check(CLI::ExistingFile);
  cmd->callback([a, &rc] { rc = run_generate(*a); });
}

}  // namespace seer::cli
