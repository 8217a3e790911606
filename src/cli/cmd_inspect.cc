// seer inspect: hyper-parameters, tokenizer summary, metadata and tensor table of a
// GGUF file or llama2.c checkpoint. Prints everything it can read; exits 1 (through
// seer::Error) when seer could not run the model, naming why.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "common/error.h"
#include "model/gguf_file.h"
#include "model/gguf_summary.h"
#include "model/llama2c_model.h"
#include "model/mapped_file.h"
#include "model/model_config.h"
#include "model/model_file.h"
#include "tokenizer/chat_template.h"

namespace seer::cli {
namespace {

using nlohmann::ordered_json;

struct TensorRow {
  std::string name, type;
  std::vector<int64_t> shape;  // GGML order
  uint64_t bytes = 0;
  double bits_per_weight = 0;  // of the type: storage bits per element, scales included
};

uint64_t element_count(const TensorRow& r) {
  uint64_t n = 1;
  for (int64_t d : r.shape) n *= static_cast<uint64_t>(d);
  return n;
}

// Per type: tensors, elements and bytes, in order of first appearance.
struct TypeTotals {
  std::string type;
  double bits_per_weight = 0;
  int tensors = 0;
  uint64_t elements = 0, bytes = 0;
};

std::vector<TypeTotals> type_totals(const std::vector<TensorRow>& rows) {
  std::vector<TypeTotals> out;
  for (const auto& r : rows) {
    auto it = std::find_if(out.begin(), out.end(), [&](const TypeTotals& t) { return t.type == r.type; });
    if (it == out.end()) it = out.insert(out.end(), TypeTotals{r.type, r.bits_per_weight});
    ++it->tensors;
    it->elements += element_count(r);
    it->bytes += r.bytes;
  }
  return out;
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

std::string human_bytes(uint64_t b) {
  if (b >= (uint64_t{1} << 30)) return fmt::format("{:.2f} GiB", static_cast<double>(b) / (1 << 30));
  if (b >= (uint64_t{1} << 20)) return fmt::format("{:.2f} MiB", static_cast<double>(b) / (1 << 20));
  if (b >= (uint64_t{1} << 10)) return fmt::format("{:.1f} KiB", static_cast<double>(b) / (1 << 10));
  return fmt::format("{} B", b);
}

ordered_json config_json(const ModelConfig& c) {
  ordered_json j;
  j["architecture"] = c.arch;
  j["name"] = c.name;
  j["layers"] = c.n_layers;
  j["embedding_size"] = c.dim;
  j["heads"] = c.n_heads;
  j["kv_heads"] = c.n_kv_heads;
  j["head_dim"] = c.head_dim;
  j["ffn_size"] = c.ffn_dim;
  j["vocab_size"] = c.vocab_size;
  j["context_length"] = c.context_length;
  j["rope_base"] = c.rope_base;
  j["rope_scaling"] = {{"type", c.rope_scaling.type},
                       {"factor", c.rope_scaling.factor},
                       {"original_context", c.rope_scaling.original_context}};
  j["rms_eps"] = c.rms_eps;
  j["qkv_bias"] = c.qkv_bias;
  j["tied_embeddings"] = c.tied_embeddings;
  j["bos_id"] = c.bos_id;
  j["eos_id"] = c.eos_id;
  j["pad_id"] = c.pad_id;
  j["parameters"] = c.parameter_count();
  return j;
}

void print_config(const ModelConfig& c) {
  std::printf("hyper-parameters:\n");
  std::printf("  architecture     %s\n", c.arch.c_str());
  if (!c.name.empty()) std::printf("  name             %s\n", c.name.c_str());
  std::printf("  layers           %d\n", c.n_layers);
  std::printf("  embedding size   %d\n", c.dim);
  std::printf("  heads            %d\n", c.n_heads);
  std::printf("  KV heads         %d%s\n", c.n_kv_heads,
              c.n_kv_heads < c.n_heads ? fmt::format(" (GQA, {} query heads per KV head)", c.n_heads / c.n_kv_heads).c_str()
                                       : "");
  std::printf("  head dim         %d\n", c.head_dim);
  std::printf("  FFN size         %d\n", c.ffn_dim);
  std::printf("  vocab size       %d\n", c.vocab_size);
  std::printf("  context length   %d\n", c.context_length);
  std::printf("  RoPE base        %g (%s pairs)\n", c.rope_base, c.rope_neox ? "neox: half-split" : "adjacent");
  if (c.rope_scaling.type != "none")
    std::printf("  RoPE scaling     %s x%g (original context %lld)\n", c.rope_scaling.type.c_str(),
                c.rope_scaling.factor, static_cast<long long>(c.rope_scaling.original_context));
  std::printf("  RMSNorm epsilon  %g\n", c.rms_eps);
  std::printf("  QKV bias         %s\n", c.qkv_bias ? "yes" : "no");
  std::printf("  tied embeddings  %s\n", c.tied_embeddings ? "yes" : "no");
  std::printf("  BOS/EOS/PAD ids  %d / %d / %d\n", c.bos_id, c.eos_id, c.pad_id);
  std::printf("  parameters       %.2f M\n", static_cast<double>(c.parameter_count()) / 1e6);
}

ordered_json tokenizer_json(const TokenizerSummary& t, const std::string& chat_use) {
  ordered_json j;
  j["model"] = t.model;
  j["pre"] = t.pre;
  j["vocab_size"] = t.vocab_size;
  j["merges"] = t.merges;
  j["bos_id"] = t.bos_id;
  j["bos"] = t.bos_text;
  j["eos_id"] = t.eos_id;
  j["eos"] = t.eos_text;
  j["unk_id"] = t.unk_id;
  j["pad_id"] = t.pad_id;
  j["add_bos"] = t.add_bos ? ordered_json(*t.add_bos) : ordered_json(nullptr);
  j["add_eos"] = t.add_eos ? ordered_json(*t.add_eos) : ordered_json(nullptr);
  j["chat_template_first_line"] = t.chat_template_first_line;
  j["chat_template_use"] = chat_use;
  return j;
}

void print_tokenizer(const TokenizerSummary& t, const std::string& chat_use) {
  auto opt_bool = [](const std::optional<bool>& b) { return b ? (*b ? "true" : "false") : "unset (vocab default)"; };
  std::printf("tokenizer:\n");
  if (t.model.empty() && t.vocab_size == 0) {
    std::printf("  (none in this file)\n");
    return;
  }
  std::printf("  model            %s\n", t.model.empty() ? "(unset)" : t.model.c_str());
  std::printf("  pre-tokenizer    %s\n", t.pre.empty() ? "(unset)" : t.pre.c_str());
  std::printf("  vocab size       %lld\n", static_cast<long long>(t.vocab_size));
  if (t.merges) std::printf("  merges           %lld\n", static_cast<long long>(t.merges));
  std::printf("  BOS              %lld %s\n", static_cast<long long>(t.bos_id), t.bos_text.c_str());
  std::printf("  EOS              %lld %s\n", static_cast<long long>(t.eos_id), t.eos_text.c_str());
  std::printf("  UNK / PAD        %lld / %lld\n", static_cast<long long>(t.unk_id), static_cast<long long>(t.pad_id));
  std::printf("  add BOS / EOS    %s / %s\n", opt_bool(t.add_bos), opt_bool(t.add_eos));
  if (t.chat_template_lines)
    std::printf("  chat template    %s%s\n", t.chat_template_first_line.c_str(),
                t.chat_template_lines > 1 ? fmt::format(" ... ({} lines)", t.chat_template_lines).c_str() : "");
  else
    std::printf("  chat template    (none)\n");
  std::printf("  chats formatted  %s\n", chat_use.c_str());
}

void print_tensors(const std::vector<TensorRow>& rows) {
  size_t w = 4;
  for (const auto& r : rows) w = std::max(w, r.name.size());
  uint64_t total = 0, elements = 0;
  std::printf("tensors (%zu):\n", rows.size());
  std::printf("  %-*s  %-6s  %5s  %-22s  %12s\n", static_cast<int>(w), "name", "type", "bpw", "shape", "bytes");
  for (const auto& r : rows) {
    std::printf("  %-*s  %-6s  %5.2f  %-22s  %12llu\n", static_cast<int>(w), r.name.c_str(), r.type.c_str(),
                r.bits_per_weight, shape_str(r.shape).c_str(), static_cast<unsigned long long>(r.bytes));
    total += r.bytes;
    elements += element_count(r);
  }
  std::printf("types:");
  for (const auto& t : type_totals(rows))
    std::printf(" %s (%.2f bpw) %d tensors, %.2f M elements;", t.type.c_str(), t.bits_per_weight, t.tensors,
                static_cast<double>(t.elements) / 1e6);
  std::printf("\n");
  std::printf("total: %zu tensors, %.2f M elements, %llu bytes (%s), %.2f bits per weight\n", rows.size(),
              static_cast<double>(elements) / 1e6, static_cast<unsigned long long>(total), human_bytes(total).c_str(),
              elements ? 8.0 * static_cast<double>(total) / static_cast<double>(elements) : 0.0);
}

ordered_json tensors_json(const std::vector<TensorRow>& rows) {
  ordered_json arr = ordered_json::array();
  for (const auto& r : rows)
    arr.push_back({{"name", r.name},
                   {"type", r.type},
                   {"shape", r.shape},
                   {"bytes", r.bytes},
                   {"bits_per_weight", r.bits_per_weight}});
  return arr;
}

// Returns the error message if seer cannot run the model, after printing what it read.
std::optional<std::string> inspect_gguf(const std::string& path, bool json) {
  auto f = GgufFile::open(path);
  std::optional<ModelConfig> config;
  std::optional<std::string> problem;
  try {
    config = config_from_gguf(*f);
    ModelFile::open(path);  // checks every tensor's presence, shape and type
  } catch (const Error& e) {
    problem = e.what();
  }
  TokenizerSummary tok = summarize_tokenizer(*f);
  // How `seer serve` would format chats: the model's template, or a fallback and why.
  const std::string chat_use =
      ChatTemplate::from_model(f->find_string("tokenizer.chat_template").value_or(""), {tok.bos_text, tok.eos_text})
          .describe();
  std::vector<TensorRow> rows;
  for (const auto& t : f->tensors())
    rows.push_back({t.name, std::string(ggml_type_name(t.type)), t.shape, t.bytes,
                    ggml_bits_per_weight(*ggml_type_info(static_cast<uint32_t>(t.type)))});

  if (json) {
    ordered_json j;
    j["file"] = path;
    j["format"] = "gguf";
    j["version"] = f->version();
    j["file_bytes"] = f->file_size();
    j["alignment"] = f->alignment();
    j["config"] = config ? config_json(*config) : ordered_json(nullptr);
    j["tokenizer"] = tokenizer_json(tok, chat_use);
    ordered_json meta = ordered_json::object();
    for (const auto& [k, v] : f->metadata()) meta[k] = v.summary();
    j["metadata"] = meta;
    j["tensors"] = tensors_json(rows);
    j["loadable"] = !problem;
    if (problem) j["error"] = *problem;
    std::printf("%s\n", j.dump(2).c_str());
    return problem;
  }
  std::printf("file: %s (GGUF v%u, %s, alignment %llu)\n", path.c_str(), f->version(),
              human_bytes(f->file_size()).c_str(), static_cast<unsigned long long>(f->alignment()));
  if (config) print_config(*config);
  else std::printf("hyper-parameters: (not a model seer can run; see the error below)\n");
  print_tokenizer(tok, chat_use);
  std::printf("metadata (%zu keys):\n", f->metadata().size());
  for (const auto& [k, v] : f->metadata())
    std::printf("  %-40s %-7s %s\n", k.c_str(), std::string(gguf_type_name(v.type)).c_str(), v.summary().c_str());
  print_tensors(rows);
  return problem;
}

std::optional<std::string> inspect_llama2c(const std::string& path, const std::string& tokenizer, bool json) {
  MappedFile file(path);
  Llama2cLayout L = llama2c_layout(file.data(), file.size(), path);
  std::optional<Llama2cTokenizerSummary> tok;
  if (!tokenizer.empty()) tok = summarize_llama2c_tokenizer(tokenizer, L.config.vocab_size);
  std::vector<TensorRow> rows;
  for (const auto& t : L.tensors)
    rows.push_back({t.name, "F32", t.rows == 1 ? std::vector<int64_t>{t.cols} : std::vector<int64_t>{t.cols, t.rows},
                    t.bytes()});
  if (json) {
    ordered_json j;
    j["file"] = path;
    j["format"] = "llama2.c";
    j["file_bytes"] = file.size();
    j["config"] = config_json(L.config);
    j["shared_classifier"] = L.shared_classifier;
    if (tok)
      j["tokenizer"] = {{"file", tokenizer}, {"vocab_size", tok->vocab_size}, {"max_token_length", tok->max_token_length}};
    else
      j["tokenizer"] = nullptr;
    j["tensors"] = tensors_json(rows);
    j["loadable"] = true;
    std::printf("%s\n", j.dump(2).c_str());
    return std::nullopt;
  }
  std::printf("file: %s (llama2.c checkpoint, %s, %s classifier)\n", path.c_str(), human_bytes(file.size()).c_str(),
              L.shared_classifier ? "shared" : "separate");
  print_config(L.config);
  std::printf("tokenizer:\n");
  if (tok) {
    std::printf("  file             %s (llama2.c format)\n", tokenizer.c_str());
    std::printf("  vocab size       %d\n", tok->vocab_size);
    std::printf("  max token length %d\n", tok->max_token_length);
    std::string first;
    for (const auto& s : tok->first_tokens) first += (first.empty() ? "" : " ") + ("'" + s + "'");
    std::printf("  first tokens     %s\n", first.c_str());
  } else {
    std::printf("  (kept in a separate file; pass --tokenizer tokenizer.bin)\n");
  }
  print_tensors(rows);
  return std::nullopt;
}

int run_inspect(const std::string& path, const std::string& tokenizer, bool json) {
  bool gguf;
  {
    MappedFile probe(path);
    gguf = probe.size() >= 4 && std::memcmp(probe.data(), "GGUF", 4) == 0;
  }
  if (gguf && !tokenizer.empty())
    fail("inspect: --tokenizer is for llama2.c checkpoints; {} carries its tokenizer inside", path);
  std::optional<std::string> problem = gguf ? inspect_gguf(path, json) : inspect_llama2c(path, tokenizer, json);
  std::fflush(stdout);
  if (problem) throw Error(*problem);
  return 0;
}

}  // namespace

void add_inspect(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("inspect", "Print a model file's hyper-parameters, tokenizer and tensors");
  auto path = std::make_shared<std::string>();
  auto tokenizer = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("file", *path, "GGUF file or llama2.c checkpoint")->required();
  cmd->add_option("--tokenizer", *tokenizer, "llama2.c tokenizer.bin to summarize with a .bin checkpoint");
  cmd->add_flag("--json", *json, "One JSON object on stdout");
  cmd->callback([=, &rc] { rc = run_inspect(*path, *tokenizer, *json); });
}

}  // namespace seer::cli
