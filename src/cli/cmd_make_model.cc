// seer make-model: writes a GGUF with random weights for a named or custom shape.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/commands.h"
#include "common/error.h"
#include "model/random_model.h"

namespace seer::cli {
namespace {

struct MakeModelArgs {
  std::string shape = "tiny";
  std::string arch = "llama";
  bool tied = false, llama3_rope = false;
  std::optional<int> head_dim;
  int sliding_window = 0, swa_period = 0, rope_dim = 0;
  bool longrope = false;
  int experts = 0, experts_used = 0;
  double attn_softcap = 0, final_softcap = 0;
  std::string type = "f32";
  std::string out;
  uint64_t seed = 0;
  std::string tokenizer_from;
  std::string chat_template_file;
  std::optional<int> layers, dim, heads, kv_heads, ffn, vocab, context;
  std::optional<double> rope_base;
  int threads = 0;
  bool quiet = false;
};

int run_make_model(const MakeModelArgs& a) {
  auto shape = named_model_shape(a.shape);
  if (!shape) {
    std::string names;
    for (const auto& n : model_shape_names()) names += (names.empty() ? "" : ", ") + n;
    fail("make-model: unknown shape '{}' (known: {})", a.shape, names);
  }
  bool custom = false;
  auto override_int = [&](const std::optional<int>& v, int& field) {
    if (v) {
      field = *v;
      custom = true;
    }
  };
  override_int(a.layers, shape->n_layers);
  override_int(a.dim, shape->dim);
  override_int(a.heads, shape->n_heads);
  override_int(a.kv_heads, shape->n_kv_heads);
  override_int(a.ffn, shape->ffn_dim);
  override_int(a.vocab, shape->vocab_size);
  override_int(a.context, shape->context_length);
  override_int(a.head_dim, shape->head_dim);
  if (a.heads && !a.kv_heads) shape->n_kv_heads = *a.heads;  // no GQA unless asked
  if (a.rope_base) {
    shape->rope_base = *a.rope_base;
    custom = true;
  }
  if (custom) shape->name = "custom (from " + shape->name + ")";
  if (a.vocab && !a.tokenizer_from.empty())
    fail("make-model: --vocab and --tokenizer-from exclude each other (the copied tokenizer sets the vocabulary)");

  auto type = ggml_type_from_name(a.type);
  if (!type) fail("make-model: unknown type '{}' (expected one of {})", a.type, computable_type_names());

  RandomModelOptions opt;
  opt.shape = *shape;
  opt.type = *type;
  opt.arch = a.arch;
  opt.tied_embeddings = a.tied;
  opt.llama3_rope = a.llama3_rope;
  opt.sliding_window = a.sliding_window;
  opt.longrope = a.longrope;
  opt.experts = a.experts;
  opt.experts_used = a.experts_used;
  opt.rope_dim = a.rope_dim;
  opt.swa_period = a.swa_period;
  opt.attn_softcap = a.attn_softcap;
  opt.final_softcap = a.final_softcap;
  opt.seed = a.seed;
  opt.tokenizer_from = a.tokenizer_from;
  if (!a.chat_template_file.empty()) {
    std::ifstream in(a.chat_template_file, std::ios::binary);
    if (!in) fail("make-model: cannot read the chat template file '{}'", a.chat_template_file);
    opt.chat_template.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (opt.chat_template.empty()) fail("make-model: the chat template file '{}' is empty", a.chat_template_file);
  }
  opt.threads = a.threads;
  opt.progress = !a.quiet;
  auto start = std::chrono::steady_clock::now();
  RandomModelSummary s = write_random_model(a.out, opt);
  double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!a.quiet)
    std::fprintf(stderr,
                 "wrote %s: %s %s, %s, RANDOM weights (seed %llu): %d layers, dim %d, %d heads, %d KV heads, FFN %d, "
                 "vocab %d, context %d; %.1f M parameters, %.1f MiB in %.2f s\n",
                 a.out.c_str(), a.arch.c_str(), s.shape.name.c_str(), std::string(ggml_type_name(*type)).c_str(),
                 static_cast<unsigned long long>(a.seed), s.shape.n_layers, s.shape.dim, s.shape.n_heads,
                 s.shape.n_kv_heads, s.shape.ffn_dim, s.shape.vocab_size, s.shape.context_length,
                 static_cast<double>(s.parameters) / 1e6, static_cast<double>(s.file_bytes) / (1 << 20), secs);
  return 0;
}

}  // namespace

void add_make_model(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "make-model", "Write a GGUF model with RANDOM weights for a named shape (tests and benchmarks)");
  auto a = std::make_shared<MakeModelArgs>();
  std::string shapes;
  for (const auto& n : model_shape_names()) shapes += (shapes.empty() ? "" : ", ") + n;
  cmd->add_option("--shape", a->shape, "Named shape: " + shapes)->capture_default_str();
  std::string archs;
  for (const auto& n : random_model_architectures()) archs += (archs.empty() ? "" : ", ") + n;
  cmd->add_option("--arch", a->arch, "Architecture (general.architecture): " + archs)->capture_default_str();
  cmd->add_flag("--tied", a->tied, "Tied output embeddings: no output.weight, logits reuse token_embd");
  cmd->add_flag("--llama3-rope", a->llama3_rope,
                "Llama 3.1 RoPE frequency scaling (factor 8, original context 8192) as rope_freqs.weight");
  cmd->add_option("--head-dim", a->head_dim, "Override the head dimension (default: dim / heads)");
  cmd->add_option("--experts", a->experts, "Mixture of experts: expert count (qwen3moe; llama as Mixtral)");
  cmd->add_option("--experts-used", a->experts_used, "Mixture of experts: experts per token");
  cmd->add_flag("--longrope", a->longrope, "phi3: LongRoPE factors (rope_factors_long/short) and attention factor");
  cmd->add_option("--rope-dim", a->rope_dim, "rope.dimension_count: rotate only this many values per head");
  cmd->add_option("--sliding-window", a->sliding_window,
                  "gemma: attention.sliding_window (0: not written; llama.cpp's default applies)");
  cmd->add_option("--swa-period", a->swa_period, "gemma: attention.sliding_window_pattern (every Nth layer global)");
  cmd->add_option("--attn-softcap", a->attn_softcap, "gemma2: attn_logit_softcapping (0: not written)");
  cmd->add_option("--final-softcap", a->final_softcap, "gemma: final_logit_softcapping (0: not written)");
  cmd->add_option("--type", a->type,
                  "Matrix type (norms stay f32): f32, f16, bf16, q8_0, q4_0, q4_1, q5_0, q5_1, q2_k, q3_k, q4_k, "
                  "q5_k, q6_k, iq4_nl, iq4_xs (K-quants and iq4_xs need row lengths that are multiples of 256)")
      ->capture_default_str();
  cmd->add_option("--out,-o", a->out, "Output GGUF file")->required();
  cmd->add_option("--seed", a->seed, "Random seed (same seed, same file)")->capture_default_str();
  cmd->add_option("--tokenizer-from", a->tokenizer_from,
                  "Copy the tokenizer.* metadata of this GGUF (sets the vocabulary size)");
  cmd->add_option("--chat-template", a->chat_template_file,
                  "Write this Jinja file as tokenizer.chat_template (over a copied tokenizer's)");
  cmd->add_option("--layers", a->layers, "Override the layer count");
  cmd->add_option("--dim", a->dim, "Override the embedding size");
  cmd->add_option("--heads", a->heads, "Override the attention head count");
  cmd->add_option("--kv-heads", a->kv_heads, "Override the KV head count (GQA)");
  cmd->add_option("--ffn", a->ffn, "Override the FFN size");
  cmd->add_option("--vocab", a->vocab, "Override the vocabulary size (byte-level tokenizer, >= 259)");
  cmd->add_option("--context", a->context, "Override the context length");
  cmd->add_option("--rope-base", a->rope_base, "Override the RoPE base");
  cmd->add_option("--threads", a->threads, "Generator threads (0: all cores)")->capture_default_str();
  cmd->add_flag("--quiet,-q", a->quiet, "No progress bar or summary");
  cmd->callback([a, &rc] { rc = run_make_model(*a); });
}

}  // namespace seer::cli
