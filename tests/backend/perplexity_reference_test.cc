// seer's perplexity against llama.cpp's llama-perplexity on the same files and text:
// the reference values in tests/data/llamacpp_ref/perplexity.json were made by
// scripts/reference/perplexity_vs_llamacpp.sh with a llama.cpp build; the models are
// the trained stories260K (../shared) and a random-weight one that make-model writes
// again here from its seed. The bar is 0.5 %.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "backend/cpu_backend.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "runtime/perplexity.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

nlohmann::json references() {
  std::ifstream in(testing::source_dir() + "/tests/data/llamacpp_ref/perplexity.json");
  return nlohmann::json::parse(in);
}

// The reference text: Alpaca outputs 0..299 joined by blank lines (less the final
// newline, as llama-perplexity reads its file).
std::string alpaca_text(const std::string& path) {
  std::ifstream in(path);
  const auto records = nlohmann::json::parse(in);
  std::string text;
  for (size_t i = 0; i < 300; ++i) {
    if (i) text += "\n\n";
    text += records[i]["output"].get<std::string>();
  }
  return text;
}

double seer_perplexity(const std::string& model_path, const std::string& text, const nlohmann::json& refs) {
  auto model = ModelFile::open(model_path);
  auto tok = tokenizer_from_gguf(*model->gguf());
  PerplexityOptions o;
  o.ctx = refs["ctx"];
  o.chunks = refs["chunks"];
  o.bos = tok->add_bos() ? tok->bos_id() : -1;
  CpuBackendOptions bo;
  bo.threads = 2;
  bo.kv.device_blocks = (o.ctx + bo.kv.block_size - 1) / bo.kv.block_size;
  auto backend = make_cpu_backend(*model, bo);
  return perplexity(*backend, tok->encode(text, /*add_special=*/true), o).perplexity;
}

TEST(PerplexityVsLlamaCpp, Stories260KF32) {
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  SEER_REQUIRE_SHARED_FILE(model, "models/stories260K.gguf");
  const auto refs = references();
  const double llama = refs["models"]["stories260K:F32"];
  EXPECT_NEAR(seer_perplexity(model, alpaca_text(alpaca), refs), llama, 0.005 * llama);
}

TEST(PerplexityVsLlamaCpp, RandomKqTinyF16) {
  SEER_REQUIRE_SHARED_FILE(alpaca, "alpaca/alpaca_data.json");
  const auto refs = references();
  RandomModelOptions o;  // as the script's `make-model --shape tiny --dim 256 --ffn 512 --heads 4 --kv-heads 2`
  o.shape = *named_model_shape("tiny");
  o.shape.dim = 256;
  o.shape.ffn_dim = 512;
  o.shape.n_heads = 4;
  o.shape.n_kv_heads = 2;
  o.type = GgmlType::F16;
  o.seed = 1;
  o.progress = false;
  const std::string path = testing::scratch_dir() + "/kq-tiny-F16.gguf";
  (void)write_random_model(path, o);
  const double llama = refs["models"]["kq-tiny:F16"];
  EXPECT_NEAR(seer_perplexity(path, alpaca_text(alpaca), refs), llama, 0.005 * llama);
}

}  // namespace
}  // namespace seer
