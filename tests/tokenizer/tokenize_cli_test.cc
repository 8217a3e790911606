// `seer tokenize` end to end: reads stdin, prints ids on one line.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <sstream>

#include "support/test_paths.h"

namespace seer {
namespace {

struct CliRun {
  int code;
  std::string out, err;
};

// `seer SUBCOMMAND ARGS < input`.
CliRun run_seer(const std::string& subcommand, const std::string& args, const std::string& input) {
  const std::string dir = testing::scratch_dir();
  std::ofstream(dir + "/cli-in.txt", std::ios::binary) << input;
  const std::string cmd = testing::seer_binary() + " " + subcommand + " " + args + " < " + dir + "/cli-in.txt > " + dir +
                          "/cli-out.txt 2> " + dir + "/cli-err.txt";
  const int status = std::system(cmd.c_str());
  auto slurp = [](const std::string& p) {
    std::ifstream in(p, std::ios::binary);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir + "/cli-out.txt"), slurp(dir + "/cli-err.txt")};
}

CliRun tokenize(const std::string& args, const std::string& input) { return run_seer("tokenize", args, input); }

TEST(TokenizeCli, GgufVocabulary) {
  SEER_REQUIRE_SHARED_FILE(gpt2, "tokenizer-tests/ggml-vocab-gpt-2.gguf");
  SEER_REQUIRE_SHARED_FILE(spm, "tokenizer-tests/ggml-vocab-llama-spm.gguf");
  EXPECT_EQ(tokenize("--model " + gpt2, "Hello world").out, "15496 995\n");
  EXPECT_EQ(tokenize("--model " + spm, "Hello world").out, "15043 3186\n");
  EXPECT_EQ(tokenize("--model " + spm + " --add-special", "Hello world").out, "1 15043 3186\n");
  EXPECT_EQ(tokenize("--model " + spm, "").out, "\n");
  EXPECT_EQ(tokenize("--model " + gpt2 + " --parse-special", "<|endoftext|>").out, "50256\n");
  EXPECT_NE(tokenize("--model " + gpt2, "<|endoftext|>").out, "50256\n");
}

TEST(TokenizeCli, Llama2cTokenizer) {
  SEER_REQUIRE_SHARED_FILE(bin, "models/llama2-tokenizer.bin");
  EXPECT_EQ(tokenize("--tokenizer " + bin + " --add-special", "Hello world").out, "1 15043 3186\n");
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.bin");
  // The checkpoint header says 512 tokens, so only the first 512 entries are used.
  const CliRun r = tokenize("--model " + model + " --tokenizer " + bin, "Hello");
  EXPECT_EQ(r.code, 0) << r.err;
  std::istringstream ids(r.out);
  int count = 0;
  for (int id; ids >> id; ++count) EXPECT_LT(id, 512);
  EXPECT_GT(count, 0);
}

TEST(TokenizeCli, BadFilesExitWithOne) {
  const std::string junk = testing::scratch_dir() + "/junk.gguf";
  std::ofstream(junk, std::ios::binary) << "GGUF\x03\x00\x00\x00 truncated";
  CliRun r = tokenize("--model " + junk, "x");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("junk.gguf"), std::string::npos) << r.err;
  r = tokenize("--model " + testing::scratch_dir() + "/missing.gguf", "x");
  EXPECT_EQ(r.code, 1);
  r = tokenize("", "x");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("--model"), std::string::npos) << r.err;
}

// `seer make-vocab` turns Llama 3's tokenizer.json (tests/tokenizer/hf) into a GGUF
// that `seer tokenize` reads: "Hello world" is 9906 1917 in Llama 3.
TEST(MakeVocabCli, Llama3TokenizerJsonTokenizes) {
  SEER_REQUIRE_HF_TOKENIZER(json, "llama3");
  const std::string gguf = testing::scratch_dir() + "/llama3-vocab.gguf";
  CliRun r = run_seer("make-vocab", "--hf-tokenizer " + json + " --pre llama-bpe -o " + gguf, "");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("llama-bpe, 128256 tokens, BOS 128000, EOS 128001, chat template"), std::string::npos) << r.err;
  EXPECT_EQ(tokenize("--model " + gguf, "Hello world").out, "9906 1917\n");
  EXPECT_EQ(tokenize("--model " + gguf + " --add-special", "Hello world").out, "128000 9906 1917\n");

  r = run_seer("make-vocab", "--hf-tokenizer " + json + " --pre no-such-pre -o " + gguf, "");
  EXPECT_EQ(r.code, 1);
  EXPECT_NE(r.err.find("unsupported BPE pre-tokenizer type 'no-such-pre'"), std::string::npos) << r.err;
  EXPECT_EQ(tokenize("--model " + gguf, "Hello world").out, "9906 1917\n");  // the refused run wrote nothing
}

}  // namespace
}  // namespace seer
