// seer make-vocab: a vocabulary-only GGUF from a Hugging Face tokenizer.json.
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "model/gguf_file.h"
#include "model/gguf_writer.h"
#include "model/hf_vocab.h"
#include "tokenizer/bpe_pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {
namespace {

struct MakeVocabArgs {
  HfVocabOptions vocab;
  std::string out;
};

int run_make_vocab(const MakeVocabArgs& a) {
  pretokenizer_spec(a.vocab.pre);  // refuses a name seer does not know before anything is written
  GgufWriter w;
  w.set("general.name", gguf_string("vocabulary of " + a.vocab.tokenizer_json));
  const int n = write_hf_vocab(w, a.vocab);
  w.begin(a.out);
  w.finish();
  const auto file = GgufFile::open(a.out);
  const auto tok = tokenizer_from_gguf(*file);
  std::fprintf(stderr, "wrote %s: %s, %d tokens, BOS %d, EOS %d%s\n", a.out.c_str(), tok->type_name().c_str(), n,
               tok->bos_id(), tok->eos_id(), file->has("tokenizer.chat_template") ? ", chat template" : "");
  return 0;
}

}  // namespace

void add_make_vocab(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand(
      "make-vocab", "Write a vocabulary-only GGUF from a Hugging Face tokenizer.json (byte-level BPE)");
  auto a = std::make_shared<MakeVocabArgs>();
  cmd->add_option("--hf-tokenizer", a->vocab.tokenizer_json,
                  "tokenizer.json; a tokenizer_config.json beside it adds BOS/EOS and the chat template")
      ->required();
  cmd->add_option("--pre", a->vocab.pre,
                  "Pre-tokenizer as llama.cpp names it (tokenizer.ggml.pre): llama-bpe, qwen2, deepseek-r1-qwen, ...")
      ->required();
  cmd->add_option("--out,-o", a->out, "Output GGUF file")->required();
  cmd->callback([a, &rc] { rc = run_make_vocab(*a); });
}

}  // namespace seer::cli
