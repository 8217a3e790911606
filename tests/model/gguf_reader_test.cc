#include <gtest/gtest.h>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/model_config.h"
#include "support/test_paths.h"

namespace seer {
namespace {

TEST(GgufReader, ReadsStories260K) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto f = GgufFile::open(path);
  EXPECT_EQ(f->version(), 3u);
  ModelConfig c = config_from_gguf(*f);
  EXPECT_EQ(c.arch, "llama");
  EXPECT_EQ(c.n_layers, 5);
  EXPECT_EQ(c.dim, 64);
  EXPECT_EQ(c.n_heads, 8);
  EXPECT_EQ(c.n_kv_heads, 4);
  EXPECT_EQ(c.head_dim, 8);
  EXPECT_EQ(c.vocab_size, 512);
  EXPECT_EQ(c.context_length, 2048);
  ASSERT_NE(f->find_tensor("token_embd.weight"), nullptr);
  EXPECT_EQ(f->find_tensor("token_embd.weight")->shape, (std::vector<int64_t>{64, 512}));
}

TEST(GgufReader, ReadsEveryVocabOnlyFile) {
  for (const char* name : {"llama-spm", "gpt-2", "phi-3", "falcon", "mpt", "starcoder", "refact", "deepseek-coder",
                           "deepseek-llm", "baichuan", "bert-bge", "gpt-neox"}) {
    std::string path = testing::shared_data_file(std::string("tokenizer-tests/ggml-vocab-") + name + ".gguf");
    if (path.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
    auto f = GgufFile::open(path);
    EXPECT_TRUE(f->has("tokenizer.ggml.tokens")) << name;
    EXPECT_TRUE(f->has("tokenizer.ggml.model")) << name;
  }
}

TEST(GgufReader, RejectsNonGguf) {
  const uint8_t junk[] = {'G', 'G', 'U', 'X', 3, 0, 0, 0};
  EXPECT_THROW(GgufFile::parse(junk, sizeof(junk), "junk"), Error);
}

}  // namespace
}  // namespace seer
