#pragma once
// Per-request decoding parameters (the OpenAI fields plus seer's extensions).
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sampling/reasoning_budget.h"

namespace seer {

namespace grammar {
class CompiledGrammar;
}

// One of the most likely tokens at a position and its raw log-probability.
struct TopLogprob {
  int32_t token = -1;
  float logprob = 0.0f;
};

struct SamplingParams {
  static SamplingParams greedy() {
    SamplingParams p;
    p.temperature = 0.0f;
    return p;
  }

  float temperature = 1.0f;  // 0: greedy
  float top_p = 1.0f;
  int top_k = 0;  // 0: off
  float min_p = 0.0f;
  float repetition_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  std::optional<uint64_t> seed;
  bool logprobs = false;  // return the log-probability of each chosen token
  // With logprobs: also the `top_logprobs` most likely tokens of the raw distribution
  // at each position (OpenAI's top_logprobs / legacy logprobs: 0-20).
  int top_logprobs = 0;
  int max_tokens = 16;
  std::vector<std::string> stop;
  bool ignore_eos = false;
  // OpenAI's logit_bias: (token id, bias in [-100, 100]) added to the logits before
  // penalties' results are sampled; -100 practically bans a token, +100 forces it.
  std::vector<std::pair<int32_t, float>> logit_bias;
  // Constrained decoding (docs/structured-outputs.md): only tokens the grammar allows
  // are sampled, the mask applied before every other setting. Null: unconstrained.
  std::shared_ptr<const grammar::CompiledGrammar> grammar;
  // A thinking model's reasoning cap: past it the close tag is forced
  // (sampling/reasoning_budget.h). Inactive by default.
  ReasoningBudget reasoning_budget;

  // Throws seer::Error naming the field for impossible values.
  void validate() const;
};

}  // namespace seer
