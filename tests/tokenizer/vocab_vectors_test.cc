// llama.cpp's tokenizer test vectors (../shared/data/tokenizer-tests): every case of
// every vocabulary whose GGUF is present is encoded without BOS/EOS and compared
// with the expected ids. Prints per-vocabulary pass counts, the unsupported
// vocabularies with the reason, and the vectors or GGUFs that have no partner.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "common/error.h"
#include "model/gguf_file.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab_cases.h"

namespace fs = std::filesystem;

namespace seer {
namespace {

constexpr std::string_view kPrefix = "ggml-vocab-";

struct VocabResult {
  std::string name;
  bool supported = false;
  std::string reason;  // when unsupported
  std::string type;
  int passed = 0, total = 0;
  std::vector<std::string> failures;
};

// Vocabularies seer must support in full (the requirement).
const char* const kRequired[] = {"llama-spm", "gpt-2"};

TEST(TokenizerVectors, EveryPresentVocabularyMatchesLlamaCpp) {
  const std::string dir_s = testing::shared_data_file("tokenizer-tests");
  if (dir_s.empty()) GTEST_SKIP() << "../shared/data/tokenizer-tests not present; skipping";
  const fs::path dir(dir_s);

  std::map<std::string, bool> ggufs;   // vocab name -> has vectors
  std::vector<std::string> inputs;     // vocab names with .inp/.out
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string f = e.path().filename().string();
    if (f.rfind(kPrefix, 0) != 0) continue;
    const std::string rest = f.substr(kPrefix.size());
    if (rest.size() > 5 && rest.substr(rest.size() - 5) == ".gguf") ggufs.emplace(rest.substr(0, rest.size() - 5), false);
    if (rest.size() > 9 && rest.substr(rest.size() - 9) == ".gguf.inp") inputs.push_back(rest.substr(0, rest.size() - 9));
  }
  std::sort(inputs.begin(), inputs.end());

  std::vector<VocabResult> results;
  std::vector<std::string> no_gguf;
  for (const std::string& name : inputs) {
    const fs::path gguf = dir / (std::string(kPrefix) + name + ".gguf");
    const fs::path inp = fs::path(gguf.string() + ".inp"), out = fs::path(gguf.string() + ".out");
    if (!fs::exists(gguf)) {
      no_gguf.push_back(name);
      continue;
    }
    ggufs[name] = true;
    VocabResult r;
    r.name = name;
    std::unique_ptr<Tokenizer> tok;
    try {
      auto f = GgufFile::open(gguf.string());
      tok = tokenizer_from_gguf(*f);
    } catch (const Error& e) {
      r.reason = e.what();
      results.push_back(r);
      continue;
    }
    r.supported = true;
    r.type = tok->type_name();
    for (const auto& c : testing::read_vocab_cases(inp, out)) {
      ++r.total;
      const auto got = tok->encode(c.text, /*add_special=*/false, /*parse_special=*/false);
      if (got == c.ids) {
        ++r.passed;
      } else if (r.failures.size() < 5) {
        r.failures.push_back("text \"" + c.text + "\"\n      expected " + testing::show_ids(c.ids) + "\n      got      " + testing::show_ids(got));
      }
    }
    results.push_back(r);
  }

  std::cout << "\nllama.cpp tokenizer vectors (" << dir.string() << "):\n";
  for (const auto& r : results) {
    if (r.supported) {
      std::cout << "  " << r.name << ": " << r.passed << "/" << r.total << "  [" << r.type << "]\n";
      for (const auto& f : r.failures) std::cout << "    MISMATCH " << f << "\n";
    } else {
      std::cout << "  " << r.name << ": unsupported: " << r.reason << "\n";
    }
  }
  for (const auto& n : no_gguf) std::cout << "  " << n << ": skipped, .inp/.out present but no GGUF\n";
  for (const auto& [n, has] : ggufs)
    if (!has) std::cout << "  " << n << ": GGUF present but no .inp/.out vectors (loaded only by other tests)\n";
  std::cout << std::flush;

  for (const auto& r : results) {
    if (r.supported) {
      EXPECT_EQ(r.passed, r.total) << r.name << " has mismatches (see above)";
    }
  }
  for (const char* name : kRequired) {
    auto it = std::find_if(results.begin(), results.end(), [&](const VocabResult& r) { return r.name == name; });
    if (it == results.end()) {
      ADD_FAILURE() << "vectors for required vocabulary " << name << " are missing from " << dir;
      continue;
    }
    EXPECT_TRUE(it->supported) << name << " must be supported: " << it->reason;
    EXPECT_GT(it->total, 0) << name;
  }
}

}  // namespace
}  // namespace seer
