// A real model: stories260K at temperature 0 reproduces llama.cpp's greedy output
// (../shared/data/models/reference) exactly, prompt plus up to 128 tokens or EOS,
// compared with surrounding whitespace trimmed.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "backend/cpu_backend.h"
#include "model/gguf_file.h"
#include "model/model_file.h"
#include "sampling/sampler.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace seer {
namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\r\n";
  const size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

std::string read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Prefill in one pass, then decode token by token; returns prompt + output ids.
std::vector<int32_t> greedy(Backend& be, const Tokenizer& tok, std::vector<int32_t> ids, int max_new) {
  const int bs = be.block_size();
  ForwardSequence seq;
  for (int b = 0; b * bs < static_cast<int>(ids.size()) + max_new; ++b) seq.block_table.push_back(b);
  Sampler sampler(SamplingParams::greedy(), 0);
  std::vector<float> logits;
  const size_t prompt_len = ids.size();
  ForwardBatch batch;
  batch.sequences.push_back(seq);
  for (size_t p = 0; p < ids.size(); ++p) batch.add(0, ids[p], static_cast<int32_t>(p), p + 1 == ids.size());
  for (int step = 0; step < max_new; ++step) {
    be.forward(batch, logits);
    const int32_t next = sampler.sample(logits, {}, {}).token;
    if (tok.is_end_of_generation(next)) break;
    ids.push_back(next);
    batch = ForwardBatch{};
    batch.sequences.push_back(seq);
    batch.add(0, next, static_cast<int32_t>(ids.size() - 1), true);
  }
  EXPECT_GT(ids.size(), prompt_len);
  return ids;
}

struct Case {
  const char* prompt;
  const char* reference;
};
const Case kCases[] = {{"Once upon a time", "models/reference/stories260K-once-upon-a-time.txt"},
                       {"Tom and his dog went to the beach", "models/reference/stories260K-tom-and-his-dog.txt"}};

void check_model(const std::string& model_path, const Tokenizer& tok) {
  auto model = ModelFile::open(model_path);
  SCOPED_TRACE(model_path);
  CpuBackendOptions o;
  o.threads = 2;
  o.kv.device_blocks = 16;
  for (const Case& c : kCases) {
    const std::string ref_path = testing::shared_data_file(c.reference);
    ASSERT_FALSE(ref_path.empty()) << c.reference;
    auto be = make_cpu_backend(*model, o);
    auto ids = greedy(*be, tok, tok.encode(c.prompt, /*add_special=*/true), 128);
    EXPECT_EQ(trim(tok.decode(ids)), trim(read_text(ref_path))) << model_path << ": " << c.prompt;
  }
}

TEST(Stories260K, GgufGreedyMatchesLlamaCpp) {
  SEER_REQUIRE_SHARED_FILE(path, "models/stories260K.gguf");
  auto model = ModelFile::open(path);
  auto tok = tokenizer_from_gguf(*model->gguf());
  check_model(path, *tok);
}

}  // namespace
}  // namespace seer
