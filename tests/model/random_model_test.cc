#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "common/error.h"
#include "model/gguf_file.h"
#include "model/model_file.h"
#include "model/quant.h"
#include "model/random_model.h"
#include "model/synthetic_vocab.h"
#include "model_test_util.h"

namespace seer {
namespace {

using testing::read_bytes;
using testing::tiny_model;

std::string tmp(const std::string& name) { return testing::scratch_dir() + "/" + name; }

std::vector<float> dequantized(const WeightTensor& t) {
  std::vector<float> v(static_cast<size_t>(t.rows * t.cols));
  const size_t row_bytes = ggml_row_bytes(t.type, t.cols);
  for (int64_t r = 0; r < t.rows; ++r)
    dequantize_row(t.type, static_cast<const uint8_t*>(t.data) + r * row_bytes, v.data() + r * t.cols, t.cols);
  return v;
}

TEST(RandomModel, NamedShapes) {
  auto names = model_shape_names();
  EXPECT_EQ(names, (std::vector<std::string>{"tiny", "llama-125m", "llama-1b", "llama-2-7b", "mistral-7b"}));
  auto m = *named_model_shape("mistral-7b");
  EXPECT_EQ(m.n_kv_heads, 8);
  EXPECT_EQ(m.ffn_dim, 14336);
  EXPECT_EQ(m.context_length, 32768);
  EXPECT_EQ(m.rope_base, 1e6);
  auto l1 = *named_model_shape("llama-1b");
  EXPECT_EQ(l1.n_layers, 22);
  EXPECT_EQ(l1.n_kv_heads, 4);
  EXPECT_FALSE(named_model_shape("llama-3-405b"));
}

TEST(RandomModel, TinyLoadsInEveryType) {
  for (GgmlType type : {GgmlType::F32, GgmlType::F16, GgmlType::BF16, GgmlType::Q8_0, GgmlType::Q4_0}) {
    auto m = ModelFile::open(tiny_model(type));
    const ModelConfig& c = m->config();
    EXPECT_EQ(c.n_layers, 2);
    EXPECT_EQ(c.dim, 64);
    EXPECT_EQ(c.n_heads, 4);
    EXPECT_EQ(c.n_kv_heads, 2);
    EXPECT_EQ(c.head_dim, 16);
    EXPECT_EQ(c.ffn_dim, 192);
    EXPECT_EQ(c.vocab_size, 259);
    EXPECT_EQ(c.context_length, 512);
    EXPECT_EQ(c.bos_id, 1);
    EXPECT_EQ(c.eos_id, 2);
    EXPECT_FALSE(c.tied_embeddings);
    EXPECT_NE(c.name.find("random weights"), std::string::npos);
    const ModelWeights& w = m->weights();
    EXPECT_EQ(w.layers[1].wq.type, type);
    EXPECT_EQ(w.token_embd.type, type);
    EXPECT_EQ(w.layers[0].attn_norm.type, GgmlType::F32);
    for (float x : dequantized(w.layers[0].ffn_norm)) ASSERT_EQ(x, 1.0f);
    for (float x : dequantized(w.output_norm)) ASSERT_EQ(x, 1.0f);
    // Uniform in ±1/sqrt(fan_in): bounded, centred, with the variance of a uniform.
    for (const WeightTensor* t : {&w.layers[0].wq, &w.layers[1].w_down, &w.output}) {
      std::vector<float> v = dequantized(*t);
      const double bound = 1.0 / std::sqrt(static_cast<double>(t->cols));
      double sum = 0, sq = 0;
      for (float x : v) {
        ASSERT_LE(std::fabs(x), bound * 1.01) << t->name;
        sum += x;
        sq += static_cast<double>(x) * x;
      }
      const double n = static_cast<double>(v.size());
      EXPECT_NEAR(sum / n, 0.0, 4 * bound / std::sqrt(3 * n)) << t->name;
      EXPECT_NEAR(sq / n, bound * bound / 3, bound * bound * 0.1) << t->name << " " << ggml_type_name(type);
    }
    const GgufFile& f = *m->gguf();
    EXPECT_EQ(f.get_int("general.file_type"), llama_file_type(type));
    EXPECT_EQ(f.get_int("llama.rope.dimension_count"), 16);
    EXPECT_EQ(f.get_float("llama.rope.freq_base"), 10000.0);
  }
}

TEST(RandomModel, ByteLevelTokenizer) {
  auto f = GgufFile::open(tiny_model(GgmlType::F32));
  EXPECT_EQ(f->get_string("tokenizer.ggml.model"), "llama");
  const auto& tokens = f->get_array("tokenizer.ggml.tokens");
  const auto& types = f->get_array("tokenizer.ggml.token_type");
  const auto& scores = f->get_array("tokenizer.ggml.scores");
  ASSERT_EQ(tokens.size(), 259u);
  ASSERT_EQ(types.size(), 259u);
  ASSERT_EQ(scores.size(), 259u);
  EXPECT_EQ(tokens[0].as_string(""), "<unk>");
  EXPECT_EQ(tokens[1].as_string(""), "<s>");
  EXPECT_EQ(tokens[2].as_string(""), "</s>");
  EXPECT_EQ(tokens[3].as_string(""), "<0x00>");
  EXPECT_EQ(tokens[3 + 0x41].as_string(""), "<0x41>");
  EXPECT_EQ(tokens[258].as_string(""), "<0xFF>");
  EXPECT_EQ(types[0].as_int(""), 2);
  EXPECT_EQ(types[1].as_int(""), 3);
  EXPECT_EQ(types[2].as_int(""), 3);
  for (size_t i = 3; i < 259; ++i) EXPECT_EQ(types[i].as_int(""), 6);
  for (const auto& s : scores) EXPECT_EQ(s.as_float(""), 0.0);
  EXPECT_EQ(f->get_int("tokenizer.ggml.bos_token_id"), 1);
  EXPECT_EQ(f->get_int("tokenizer.ggml.eos_token_id"), 2);
  EXPECT_TRUE(f->find("tokenizer.ggml.add_bos_token")->as_bool(""));
}

TEST(RandomModel, LargeVocabIsDistinctAndPrintable) {
  RandomModelOptions opt;
  opt.shape = *named_model_shape("tiny");
  opt.shape.vocab_size = 32000;
  opt.shape.n_layers = 1;
  opt.shape.dim = 32;
  opt.shape.ffn_dim = 32;
  opt.type = GgmlType::Q4_0;
  opt.progress = false;
  write_random_model(tmp("bigvocab.gguf"), opt);
  auto f = GgufFile::open(tmp("bigvocab.gguf"));
  const auto& tokens = f->get_array("tokenizer.ggml.tokens");
  ASSERT_EQ(tokens.size(), 32000u);
  std::set<std::string> seen;
  for (const auto& t : tokens) {
    const std::string& s = t.as_string("");
    EXPECT_FALSE(s.empty());
    for (unsigned char ch : s) ASSERT_TRUE(ch >= 0x20 && ch != 0x7F) << s;
    seen.insert(s);
  }
  EXPECT_EQ(seen.size(), 32000u);
  EXPECT_EQ(tokens[259].as_string(""), "\u2581tok259");
  EXPECT_EQ(f->get_array("tokenizer.ggml.token_type")[31999].as_int(""), 1);
  EXPECT_EQ(ModelFile::open(tmp("bigvocab.gguf"))->config().vocab_size, 32000);
}

TEST(RandomModel, DeterministicForASeedWhateverTheThreads) {
  RandomModelOptions opt;
  opt.shape = *named_model_shape("tiny");
  opt.type = GgmlType::Q8_0;
  opt.seed = 42;
  opt.progress = false;
  opt.threads = 1;
  write_random_model(tmp("t1.gguf"), opt);
  opt.threads = 3;
  write_random_model(tmp("t3.gguf"), opt);
  opt.seed = 43;
  write_random_model(tmp("s43.gguf"), opt);
  auto a = read_bytes(tmp("t1.gguf")), b = read_bytes(tmp("t3.gguf")), c = read_bytes(tmp("s43.gguf"));
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

TEST(RandomModel, CopiesTokenizerFromAnotherGguf) {
  RandomModelOptions opt;
  opt.shape = *named_model_shape("tiny");
  opt.progress = false;
  std::string source = testing::shared_data_file("models/stories260K.gguf");
  if (source.empty()) {  // fall back to a generated vocabulary of another size
    RandomModelOptions src = opt;
    src.shape.vocab_size = 300;
    write_random_model(tmp("vocab300.gguf"), src);
    source = tmp("vocab300.gguf");
  }
  auto src = GgufFile::open(source);
  opt.tokenizer_from = source;
  RandomModelSummary s = write_random_model(tmp("copied.gguf"), opt);
  auto f = GgufFile::open(tmp("copied.gguf"));
  const size_t n = src->get_array("tokenizer.ggml.tokens").size();
  EXPECT_EQ(s.shape.vocab_size, static_cast<int>(n));
  EXPECT_EQ(f->find_tensor("token_embd.weight")->shape[1], static_cast<int64_t>(n));
  for (const auto& [key, value] : src->metadata()) {
    if (key.rfind("tokenizer.", 0) != 0) continue;
    const GgufValue* copy = f->find(key);
    ASSERT_NE(copy, nullptr) << key;
    EXPECT_EQ(copy->summary(1000000), value.summary(1000000)) << key;
    EXPECT_EQ(copy->type, value.type) << key;
  }
  EXPECT_EQ(ModelFile::open(tmp("copied.gguf"))->config().vocab_size, static_cast<int>(n));
  opt.tokenizer_from = tmp("does-not-exist.gguf");
  EXPECT_THROW(write_random_model(tmp("x.gguf"), opt), Error);
}

TEST(RandomModel, RejectsShapesTheTypeCannotHold) {
  RandomModelOptions opt;
  opt.shape = *named_model_shape("tiny");
  opt.progress = false;
  opt.type = GgmlType::Q4_0;
  opt.shape.ffn_dim = 100;  // not a multiple of 32
  EXPECT_THROW(write_random_model(tmp("bad.gguf"), opt), Error);
  opt.type = GgmlType::F16;
  EXPECT_NO_THROW(write_random_model(tmp("ok.gguf"), opt));
  opt.shape.n_heads = 3;  // 64 is not a multiple of 3
  EXPECT_THROW(write_random_model(tmp("bad.gguf"), opt), Error);
  opt.shape = *named_model_shape("tiny");
  opt.shape.n_kv_heads = 3;  // 4 heads not a multiple of 3 KV heads
  EXPECT_THROW(write_random_model(tmp("bad.gguf"), opt), Error);
  opt.shape = *named_model_shape("tiny");
  opt.shape.vocab_size = 100;  // below the byte-level vocabulary
  EXPECT_THROW(write_random_model(tmp("bad.gguf"), opt), Error);
  opt.shape = *named_model_shape("tiny");
  opt.type = GgmlType::Q8_K;  // activations only: not a weight type seer computes with
  EXPECT_THROW(write_random_model(tmp("bad.gguf"), opt), Error);
}

}  // namespace
}  // namespace seer
