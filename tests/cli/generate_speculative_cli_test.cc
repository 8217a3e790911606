// `seer generate --speculate ngram --draft-tokens K` (docs/speculative.md): the same
// text with and without drafts, greedy and seeded, on the built-in stories260K and
// a random test model, while drafts are verified and some accepted.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <vector>

#include "run_seer.h"
#include "support/test_paths.h"

namespace seer {
namespace {

using testing::run_seer;
using testing::scratch_dir;

using Args = std::vector<std::string>;

// An input-grounded prompt: the story is to be copied, so prompt lookup has matches.
const char* kCopyPrompt =
    "Once upon a time, there was a little girl named Lily. She loved to play with her ball in the park. "
    "One day, her ball rolled away. Once upon a time, there was a little girl named Lily. She loved to";

std::string random_model() {
  static const std::string path = [] {
    const std::string p = scratch_dir() + "/generate-spec-tiny.gguf";
    auto r = run_seer({"make-model", "--shape", "tiny", "--seed", "11", "-q", "--out", p});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return p;
  }();
  return path;
}

// Drafts accepted, as the speculation line on stderr says.
long accepted_drafts(const std::string& err) {
  std::smatch m;
  if (!std::regex_search(err, m, std::regex(R"((\d+) of (\d+) drafts accepted)"))) return -1;
  return std::stol(m[1]);
}

void expect_same_text(const Args& base, const Args& speculative, bool expect_accepted) {
  const auto plain = run_seer(base);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  Args with = base;
  with.insert(with.end(), speculative.begin(), speculative.end());
  const auto spec = run_seer(with);
  ASSERT_EQ(spec.exit_code, 0) << spec.err;
  EXPECT_EQ(spec.out, plain.out);
  EXPECT_EQ(plain.err.find("speculation"), std::string::npos);
  if (expect_accepted) {
    EXPECT_GT(accepted_drafts(spec.err), 0) << spec.err;
  }
}

TEST(GenerateSpeculative, GreedyTextIsTheSameOnStories260K) {
  const Args base = {"generate", "-p", kCopyPrompt, "-n", "64", "--temp", "0", "--ignore-eos", "-t", "1"};
  expect_same_text(base, {"--speculate", "ngram", "--draft-tokens", "4", "--speculate-gate", "always"}, true);
  expect_same_text(base, {"--speculate", "ngram", "--draft-tokens", "8"}, false);  // the gate may pause
}

TEST(GenerateSpeculative, SeededTextIsTheSame) {
  const Args base = {"generate", "-p", kCopyPrompt, "-n", "48", "--temp", "0.8", "--seed", "5", "--ignore-eos",
                     "-t", "1"};
  expect_same_text(base, {"--speculate", "ngram", "--draft-tokens", "3", "--speculate-gate", "always"}, false);
}

TEST(GenerateSpeculative, GreedyTextIsTheSameOnARandomModel) {
  // Random weights fall into loops that prompt lookup predicts: many drafts accepted.
  const Args base = {"generate", "-m", random_model(), "-p", "hello there hello there", "-n", "80", "--temp", "0",
                     "--ignore-eos", "-t", "1"};
  expect_same_text(base, {"--speculate", "ngram", "--draft-tokens", "6", "--speculate-gate", "always"}, true);
}

TEST(GenerateSpeculative, ADraftModelKeepsTheGreedyText) {
  SEER_REQUIRE_SHARED_FILE(stories, "models/stories260K.gguf");
  const Args base = {"generate", "-p", kCopyPrompt, "-n", "64", "--temp", "0", "--ignore-eos", "-t", "1"};
  expect_same_text(base, {"--draft-model", stories, "--draft-tokens", "4", "--speculate-gate", "always"}, true);
  const auto r = run_seer({"generate", "-m", random_model(), "-p", "hi there", "-n", "24", "--temp", "0",
                           "--ignore-eos", "-t", "1", "--draft-model", random_model(), "--speculate-gate", "always"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("draft model"), std::string::npos) << r.err;
}

TEST(GenerateSpeculative, ADraftModelWithAnotherVocabularyIsAClearError) {
  SEER_REQUIRE_SHARED_FILE(stories, "models/stories260K.gguf");
  auto r = run_seer({"generate", "-m", random_model(), "-p", "hi", "-n", "2", "--draft-model", stories});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cannot draft for"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("vocabulary sizes differ"), std::string::npos) << r.err;
  r = run_seer({"generate", "-p", "hi", "-n", "2", "--draft-model", stories, "--speculate", "ngram"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exclude each other"), std::string::npos) << r.err;
}

TEST(GenerateSpeculative, BadKnobsAreClearErrors) {
  auto r = run_seer({"generate", "-p", "hi", "-n", "2", "--speculate", "model"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--speculate"), std::string::npos) << r.err;
  r = run_seer({"generate", "-p", "hi", "-n", "2", "--speculate", "ngram", "--draft-tokens", "0"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--draft-tokens"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace seer
