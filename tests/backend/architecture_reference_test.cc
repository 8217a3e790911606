// Each architecture against llama.cpp: a random-weight GGUF is rebuilt from the
// make-model options and seed recorded in tests/backend/reference_logits/*.txt, run
// through the CPU backend (f32 K/V, one prefill batch), and every position's logits
// are compared with llama.cpp's for the same file and tokens (written by
// scripts/reference/make_reference_logits.sh; llama.cpp is not needed here). A
// reference whose model line names `file=PATH` (relative to the source tree) runs that
// committed file instead: a llama-quantize recipe, which make-model cannot rebuild.
// SEER_REFERENCE_LOGITS_DIR replaces the directory of references, so that
// scripts/reference/perplexity_vs_llamacpp.sh can check files it made with llama.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "backend/cpu_backend.h"
#include "model/model_file.h"
#include "model/random_model.h"
#include "support/test_paths.h"

namespace seer {
namespace {

struct Reference {
  std::map<std::string, std::string> model;  // make-model options
  std::vector<int32_t> tokens;
  int vocab = 0;
  double tolerance = 0;  // max |Δ| allowed per logit
  std::vector<std::vector<float>> logits;
};

Reference read_reference(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot open " + path);
  Reference r;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ls(line);
    std::string key;
    ls >> key;
    if (key == "model") {
      for (std::string kv; ls >> kv;) {
        const size_t eq = kv.find('=');
        r.model[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
    } else if (key == "tokens") {
      std::string list;
      ls >> list;
      std::stringstream ts(list);
      for (std::string t; std::getline(ts, t, ',');) r.tokens.push_back(std::stoi(t));
    } else if (key == "tolerance") {
      ls >> r.tolerance;
    } else if (key == "logits") {
      int rows = 0;
      ls >> rows >> r.vocab;
      for (int i = 0; i < rows && std::getline(in, line); ++i) {
        std::istringstream vs(line);
        std::vector<float> row(static_cast<size_t>(r.vocab));
        for (auto& v : row) vs >> v;
        r.logits.push_back(std::move(row));
      }
    }
  }
  return r;
}

std::string reference_dir() {
  const char* dir = std::getenv("SEER_REFERENCE_LOGITS_DIR");
  return dir && *dir ? dir : testing::source_dir() + "/tests/backend/reference_logits";
}

std::string build_model(const Reference& r, const std::string& name) {
  if (auto file = r.model.find("file"); file != r.model.end())
    return file->second.starts_with("/") ? file->second : testing::source_dir() + "/" + file->second;
  RandomModelOptions opt;
  auto get = [&](const std::string& k, const std::string& fallback) {
    auto it = r.model.find(k);
    return it == r.model.end() ? fallback : it->second;
  };
  opt.shape = *named_model_shape(get("shape", "tiny"));
  opt.shape.head_dim = std::stoi(get("head_dim", "0"));
  if (r.model.count("layers")) opt.shape.n_layers = std::stoi(get("layers", ""));
  if (r.model.count("rope_base")) opt.shape.rope_base = std::stod(get("rope_base", ""));
  if (r.model.count("dim")) opt.shape.dim = std::stoi(get("dim", ""));  // K-quants: rows of 256
  if (r.model.count("ffn")) opt.shape.ffn_dim = std::stoi(get("ffn", ""));
  opt.sliding_window = std::stoi(get("sliding_window", "0"));
  opt.longrope = get("longrope", "0") == "1";
  opt.experts = std::stoi(get("experts", "0"));
  opt.experts_used = std::stoi(get("experts_used", "0"));
  opt.rope_dim = std::stoi(get("rope_dim", "0"));
  opt.swa_period = std::stoi(get("swa_period", "0"));
  opt.attn_softcap = std::stod(get("attn_softcap", "0"));
  opt.final_softcap = std::stod(get("final_softcap", "0"));
  opt.arch = get("arch", "llama");
  opt.type = *ggml_type_from_name(get("type", "f32"));
  opt.seed = std::stoull(get("seed", "0"));
  opt.tied_embeddings = get("tied", "0") == "1";
  opt.llama3_rope = get("llama3_rope", "0") == "1";
  opt.progress = false;
  const std::string path = testing::scratch_dir() + "/" + name + ".gguf";
  write_random_model(path, opt);
  return path;
}

// Largest |seer - llama.cpp| over every logit of every position.
double compare(const Reference& ref, const std::vector<float>& logits, double& max_ref) {
  double max_diff = 0;
  max_ref = 0;
  for (size_t p = 0; p < ref.tokens.size(); ++p)
    for (int v = 0; v < ref.vocab; ++v) {
      const float got = logits[p * ref.vocab + v], want = ref.logits[p][v];
      max_diff = std::max(max_diff, static_cast<double>(std::fabs(got - want)));
      max_ref = std::max(max_ref, static_cast<double>(std::fabs(want)));
    }
  return max_diff;
}

class ArchitectureReference : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    ref_ = read_reference(reference_dir() + "/" + GetParam() + ".txt");
    ASSERT_FALSE(ref_.tokens.empty());
    ASSERT_EQ(ref_.logits.size(), ref_.tokens.size());
    ASSERT_GT(ref_.tolerance, 0.0);
    model_ = ModelFile::open(build_model(ref_, GetParam()));
    ASSERT_EQ(model_->config().vocab_size, ref_.vocab);
    CpuBackendOptions opts;
    opts.threads = 2;
    opts.kv.type = KvType::F32;
    opts.kv.block_size = 4;  // a sliding window of 8 then skips whole blocks
    backend_ = make_cpu_backend(*model_, opts);
    for (int b = 0; b * backend_->block_size() < static_cast<int>(ref_.tokens.size()); ++b)
      seq_.block_table.push_back(b);
  }
  void check(const std::vector<float>& logits, const char* how) {
    double max_ref = 0;
    const double max_diff = compare(ref_, logits, max_ref);
    std::printf("%s (%s): max |logit| %.4f, max |seer - llama.cpp| %.3g (tolerance %.3g)\n", GetParam().c_str(), how,
                max_ref, max_diff, ref_.tolerance);
    EXPECT_LE(max_diff, ref_.tolerance);
  }

  Reference ref_;
  std::unique_ptr<ModelFile> model_;
  std::unique_ptr<Backend> backend_;
  ForwardSequence seq_;
};

TEST_P(ArchitectureReference, PrefillLogitsMatchLlamaCpp) {
  ForwardBatch batch;
  batch.sequences.push_back(seq_);
  for (size_t p = 0; p < ref_.tokens.size(); ++p) batch.add(0, ref_.tokens[p], static_cast<int32_t>(p), true);
  std::vector<float> logits;
  backend_->forward(batch, logits);
  check(logits, "prefill");
}

// One token per forward pass: the decode path (single-row matmuls, K/V read back from
// the paged cache, one token routed to its experts).
TEST_P(ArchitectureReference, DecodeLogitsMatchLlamaCpp) {
  std::vector<float> all, logits;
  for (size_t p = 0; p < ref_.tokens.size(); ++p) {
    ForwardBatch batch;
    batch.sequences.push_back(seq_);
    batch.add(0, ref_.tokens[p], static_cast<int32_t>(p), true);
    backend_->forward(batch, logits);
    all.insert(all.end(), logits.begin(), logits.end());
  }
  check(all, "decode");
}

std::vector<std::string> reference_names() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(reference_dir()))
    if (e.path().extension() == ".txt") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

INSTANTIATE_TEST_SUITE_P(Architectures, ArchitectureReference, ::testing::ValuesIn(reference_names()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& ch : n)
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           return n;
                         });

}  // namespace
}  // namespace seer
