// `seer inspect` as a user runs it: exit codes, output, errors.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;
using testing::slurp;

std::string tmp(const std::string& name) { return scratch_dir() + "/" + name; }

void write_prefix(const std::string& from, const std::string& to, size_t n) {
  std::string bytes = slurp(from);
  std::ofstream(to, std::ios::binary) << bytes.substr(0, n);
}

bool contains_line(const std::string& text, const std::string& a, const std::string& b) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.find(a) != std::string::npos && line.find(b) != std::string::npos) return true;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return false;
}

TEST(InspectCli, Stories260K) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto r = run_seer({"inspect", path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains_line(r.out, "layers", " 5")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "  heads", " 8")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "KV heads", " 4")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "vocab size", " 512")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "blk.4.ffn_down.weight", "[172, 64]")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "token_embd.weight", "131072")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "total:", "48 tensors")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "model", "llama")) << r.out;

  auto j = run_seer({"inspect", "--json", path});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  auto doc = nlohmann::json::parse(j.out);
  EXPECT_EQ(doc["config"]["layers"], 5);
  EXPECT_EQ(doc["config"]["heads"], 8);
  EXPECT_EQ(doc["config"]["kv_heads"], 4);
  EXPECT_EQ(doc["config"]["vocab_size"], 512);
  EXPECT_EQ(doc["tokenizer"]["model"], "llama");
  EXPECT_EQ(doc["tokenizer"]["bos_id"], 1);
  EXPECT_EQ(doc["tensors"].size(), 48u);
  EXPECT_EQ(doc["loadable"], true);
}

TEST(InspectCli, Llama2cCheckpointWithTokenizer) {
  SEER_REQUIRE_SHARED_FILE(bin, "models/stories260K.bin");
  auto r = run_seer({"inspect", bin});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains_line(r.out, "file:", "llama2.c checkpoint")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "KV heads", " 4")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "context length", "512")) << r.out;
  EXPECT_TRUE(contains_line(r.out, "total:", "47 tensors")) << r.out;  // 9 per layer + 2 (shared classifier)
  SEER_REQUIRE_SHARED_FILE(tok, "models/llama2-tokenizer.bin");
  // The 32k tokenizer does not belong to this 512-token model: a clean error.
  auto bad = run_seer({"inspect", bin, "--tokenizer", tok});
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("llama2-tokenizer.bin"), std::string::npos) << bad.err;
}

TEST(InspectCli, TruncatedFileNamesTheFile) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  for (size_t n : {size_t{0}, size_t{10}, size_t{3000}, size_t{600000}}) {
    const std::string cut = tmp("cut-" + std::to_string(n) + ".gguf");
    write_prefix(path, cut, n);
    auto r = run_seer({"inspect", cut});
    EXPECT_EQ(r.exit_code, 1) << n << " " << r.err;
    EXPECT_NE(r.err.find(cut), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("seer: error:"), std::string::npos) << r.err;
  }
  auto missing = run_seer({"inspect", tmp("absent.gguf")});
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_NE(missing.err.find("absent.gguf"), std::string::npos) << missing.err;
}

TEST(InspectCli, UnsupportedArchitectureExitsOne) {
  SEER_REQUIRE_SHARED_FILE(path, "tokenizer-tests/ggml-vocab-gpt-2.gguf");
  auto r = run_seer({"inspect", path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("'gpt2'"), std::string::npos) << r.err;
  EXPECT_NE(r.out.find("tokenizer:"), std::string::npos);  // what could be read is still shown
  EXPECT_TRUE(contains_line(r.out, "model", "gpt2")) << r.out;
}

}  // namespace
}  // namespace seer
