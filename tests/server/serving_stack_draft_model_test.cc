// `seer serve --draft-model F`: the stack wires a ModelDraftProposer into the
// engine (the summary names it), and refuses a draft model with another vocabulary,
// or one beside --speculate ngram, before any start-up profile runs.
#include <gtest/gtest.h>

#include "common/error.h"
#include "model/random_model.h"
#include "server/serving_stack.h"
#include "support/test_paths.h"

namespace seer::server {
namespace {

ServingConfig stories() {
  ServingConfig c;
  c.model_path = seer::testing::source_dir() + "/models/stories260K.gguf";
  c.kv_blocks = 64;
  c.host_kv_blocks = 0;
  c.threads = 1;
  c.progress = false;
  c.tbt_slo_s = 0;
  c.chunk_cost = "analytic";
  return c;
}

std::string error_of(const ServingConfig& c) {
  try {
    ServingStack s(c);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(ServingStackDraftModel, WiresTheDraftModelIntoTheEngine) {
  ServingConfig c = stories();
  c.draft_model = c.model_path;
  c.draft_slots = 3;
  ServingStack stack(c);
  EXPECT_NE(stack.summary().find("speculative decoding model (4 draft tokens)"), std::string::npos)
      << stack.summary();
  ASSERT_NE(stack.engine().config().drafter, nullptr);
  EXPECT_EQ(stack.engine().config().drafter->name(), "model");
}

TEST(ServingStackDraftModel, RefusesAnotherVocabularyAndNgramBesideIt) {
  const std::string other = seer::testing::scratch_dir() + "/serving-draft-other-vocab.gguf";
  RandomModelOptions o;
  o.shape = ModelShape{.name = "other", .n_layers = 1, .dim = 32, .n_heads = 4, .n_kv_heads = 2, .ffn_dim = 64,
                       .vocab_size = 300, .context_length = 256};
  o.threads = 1;
  o.progress = false;
  (void)write_random_model(other, o);
  ServingConfig c = stories();
  c.draft_model = other;
  EXPECT_NE(error_of(c).find("vocabulary sizes differ (target 512, draft 300)"), std::string::npos) << error_of(c);
  c.draft_model = c.model_path;
  c.speculate = "ngram";
  EXPECT_NE(error_of(c).find("exclude each other"), std::string::npos) << error_of(c);
}

}  // namespace
}  // namespace seer::server
