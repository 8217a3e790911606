// seer tokenize: prints the token ids of UTF-8 text read from stdin.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "common/error.h"
#include "model/gguf_file.h"
#include "tokenizer/tokenizer.h"

namespace seer::cli {

namespace {

struct TokenizeOptions {
  std::string model;
  std::string tokenizer;
  bool add_special = false;
  bool parse_special = false;
};

bool starts_with_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open: {}", path, std::strerror(errno));
  char magic[4] = {};
  in.read(magic, 4);
  return in.gcount() == 4 && std::memcmp(magic, "GGUF", 4) == 0;
}

// The vocabulary size in a llama2.c checkpoint header (7 int32: dim, hidden_dim,
// n_layers, n_heads, n_kv_heads, vocab_size, seq_len; a negative vocab_size marks an
// unshared classifier).
int32_t llama2c_vocab_size(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) fail("{}: cannot open: {}", path, std::strerror(errno));
  int32_t header[7] = {};
  in.read(reinterpret_cast<char*>(header), sizeof(header));
  if (in.gcount() != static_cast<std::streamsize>(sizeof(header)))
    fail("{}: truncated llama2.c header: expected 28 bytes (7 int32) at offset 0", path);
  const int64_t vocab = header[5] < 0 ? -static_cast<int64_t>(header[5]) : header[5];
  if (vocab <= 0 || vocab > (1 << 24))
    fail("{}: offset 20: vocab_size {} is not a plausible llama2.c vocabulary size", path, header[5]);
  return static_cast<int32_t>(vocab);
}

std::unique_ptr<Tokenizer> load_tokenizer(const TokenizeOptions& o) {
  if (!o.model.empty() && starts_with_gguf_magic(o.model)) {
    if (!o.tokenizer.empty()) fail("--tokenizer is for llama2.c checkpoints; {} is a GGUF with its own vocabulary", o.model);
    auto gguf = GgufFile::open(o.model);  // metadata only: vocab-only files work too
    return tokenizer_from_gguf(*gguf);
  }
  if (o.tokenizer.empty()) {
    if (o.model.empty()) fail("give --model FILE (a GGUF) or --tokenizer tokenizer.bin");
    fail("{} is not a GGUF file; for a llama2.c checkpoint also give --tokenizer tokenizer.bin", o.model);
  }
  const int32_t vocab = o.model.empty() ? 0 : llama2c_vocab_size(o.model);
  return tokenizer_from_llama2c(o.tokenizer, vocab);
}

int run_tokenize(const TokenizeOptions& o) {
  auto tok = load_tokenizer(o);
  std::string text;
  char buf[1 << 16];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), stdin)) > 0;) text.append(buf, n);
  if (std::ferror(stdin)) fail("reading stdin: {}", std::strerror(errno));
  const auto ids = tok->encode(text, o.add_special, o.parse_special);
  std::string line;
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) line += ' ';
    line += std::to_string(ids[i]);
  }
  line += '\n';
  std::fwrite(line.data(), 1, line.size(), stdout);
  return 0;
}

}  // namespace

void add_tokenize(CLI::App& app, int& rc) {
  auto* cmd = app.add_subcommand("tokenize", "Print the token ids of UTF-8 text read from stdin");
  auto opts = std::make_shared<TokenizeOptions>();
  cmd->add_option("--model", opts->model, "GGUF file (vocab-only files work), or a llama2.c checkpoint with --tokenizer");
  cmd->add_option("--tokenizer", opts->tokenizer, "llama2.c tokenizer.bin");
  cmd->add_flag("--add-special", opts->add_special, "add BOS/EOS as the vocabulary says (default: none)");
  cmd->add_flag("--parse-special", opts->parse_special, "recognise special-token text such as <|im_start|>");
  cmd->callback([opts, &rc] { rc = run_tokenize(*opts); });
}

}  // namespace seer::cli
