// The reasoning budget: after max_tokens tokens of reasoning the close tag's tokens
// are forced, one per position, however the model spelled the tags; the sampler
// returns the forced token instead of its draw.
#include "sampling/reasoning_budget.h"

#include <gtest/gtest.h>

#include <vector>

#include "sampling/sampler.h"

namespace seer {
namespace {

// 0 "<think>", 1 "a", 2 "</", 3 "think>", 4 "<", 5 "\n", 6 "b"
ReasoningBudget budget(int32_t max_tokens, bool starts_inside = false) {
  ReasoningBudget b;
  b.max_tokens = max_tokens;
  b.open = "<think>";
  b.close = "</think>";
  b.close_tokens = {2, 3};
  b.starts_inside = starts_inside;
  b.token_bytes = std::make_shared<const std::vector<std::string>>(
      std::vector<std::string>{"<think>", "a", "</", "think>", "<", "\n", "b"});
  return b;
}

TEST(ReasoningBudget, ForcesTheCloseTagAfterTheBudget) {
  ReasoningBudgetTracker t(budget(2));
  std::vector<int32_t> out = {5, 0};  // "\n<think>": the reasoning begins
  EXPECT_FALSE(t.forced(out));
  out.push_back(1);
  EXPECT_FALSE(t.forced(out));
  out.push_back(6);  // two tokens of reasoning: the budget is spent
  EXPECT_EQ(t.forced(out), 2);
  out.push_back(2);
  EXPECT_EQ(t.forced(out), 3);
  out.push_back(3);
  EXPECT_FALSE(t.forced(out));  // closed: the answer is the model's
  out.insert(out.end(), {1, 1, 1});
  EXPECT_FALSE(t.forced(out));
}

TEST(ReasoningBudget, TagsSpelledInOtherTokensAreFound) {
  ReasoningBudgetTracker t(budget(3));
  std::vector<int32_t> out = {4, 1};  // "<a": not a tag, the answer began
  EXPECT_FALSE(t.forced(out));
  out.insert(out.end(), {1, 1, 1, 1});
  EXPECT_FALSE(t.forced(out));

  ReasoningBudgetTracker closes(budget(3));
  std::vector<int32_t> own = {0, 1, 2, 3};  // the model closes by itself within budget
  EXPECT_FALSE(closes.forced(own));
  own.insert(own.end(), {1, 1, 1, 1});
  EXPECT_FALSE(closes.forced(own));
}

TEST(ReasoningBudget, PromptThatOpensTheReasoningAndZeroBudget) {
  ReasoningBudgetTracker zero(budget(0, /*starts_inside=*/true));
  EXPECT_EQ(zero.forced({}), 2);
  ReasoningBudgetTracker one(budget(1, /*starts_inside=*/true));
  EXPECT_FALSE(one.forced({}));
  const std::vector<int32_t> out = {1};
  EXPECT_EQ(one.forced(out), 2);
  EXPECT_FALSE(ReasoningBudgetTracker(ReasoningBudget{}).forced(out));  // inactive
}

TEST(ReasoningBudget, SamplerReturnsTheForcedTokens) {
  SamplingParams p = SamplingParams::greedy();
  p.reasoning_budget = budget(2, /*starts_inside=*/true);
  p.logprobs = true;
  Sampler s(p, 1);
  const std::vector<float> logits = {0, 5, 0, 0, 0, 0, 0};  // the model always wants "a"
  std::vector<int32_t> out;
  for (int i = 0; i < 6; ++i) out.push_back(s.sample(logits, {}, out).token);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 1, 2, 3, 1, 1}));
  Sampler fresh(p, 1);
  const SampleResult forced = fresh.sample(logits, {}, std::vector<int32_t>{1, 1});
  EXPECT_EQ(forced.token, 2);
  EXPECT_LT(forced.logprob, -4.0f);  // the forced token's own logprob under the model
}

}  // namespace
}  // namespace seer
