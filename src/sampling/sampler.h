#pragma once
// Per-request token sampling. Order of operations (as vLLM): repetition penalty
// (over prompt + output, dividing positive logits and multiplying negative ones, as
// llama.cpp/vLLM), frequency and presence penalties (over the output), then greedy
// argmax when temperature == 0; otherwise temperature, top-k, top-p, min-p and a
// draw from the request's own random stream. The stream advances once per sampled
// token, so the same seed gives the same tokens whatever else is in the batch.
// With params.grammar, the tokens the grammar refuses are set to -inf before all of
// that; the grammar state follows the `output` tokens given to sample(), so it stays
// right whatever happens to the request in between (preemption, swap).
#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "grammar/token_mask.h"
#include "sampling/rng.h"
#include "sampling/sampling_params.h"

namespace seer {

struct SampleResult {
  int32_t token = -1;
  // log-softmax of the model's raw logits (before penalties, temperature and
  // truncation) at the chosen token, as vLLM's default "raw" logprobs.
  float logprob = 0.0f;
  // With params.top_logprobs > 0: that many most likely tokens of the same raw
  // distribution, most likely first (ties: lower id first).
  std::vector<TopLogprob> top;
};

class Sampler {
 public:
  // `seed` is used when params.seed is unset (the caller draws one per request).
  Sampler(const SamplingParams& params, uint64_t seed);

  SampleResult sample(std::span<const float> logits, std::span<const int32_t> prompt,
                      std::span<const int32_t> output);

  // The candidate set after penalties, temperature and truncation, in the order the
  // draw walks it, with probabilities renormalized (tests inspect it). Does not
  // advance the random stream.
  struct Candidate {
    int32_t token;
    float prob;
  };
  std::vector<Candidate> candidates(std::span<const float> logits, std::span<const int32_t> prompt,
                                    std::span<const int32_t> output);

  // Brings the grammar up to `output` and computes the token mask a following
  // sample() with the same `output` applies, so that work can run while the forward
  // pass computes the logits (MaskPrefetcher). Nothing to do without a grammar.
  void prepare(std::span<const int32_t> output);
  bool constrained() const { return constraint_ != nullptr; }

  // The request's grammar position (null when unconstrained).
  const grammar::GrammarConstraint* constraint() const { return constraint_.get(); }

 private:
  // Copies logits into work_ and masks them by the grammar (advanced over `output` first).
  void load(std::span<const float> logits, std::span<const int32_t> output);
  void sync_grammar(std::span<const int32_t> output);
  // The model's choice of r.token: grammar, penalties, truncation and the draw.
  void draw(std::span<const float> logits, std::span<const int32_t> prompt, std::span<const int32_t> output,
            SampleResult& r);
  void apply_logit_bias();
  void apply_penalties(std::span<const int32_t> prompt, std::span<const int32_t> output);
  // Fills cand_ from work_ (temperature applied) and truncates it.
  void truncate();

  SamplingParams params_;
  Rng rng_;
  std::vector<float> work_;
  std::vector<int32_t> counts_;  // output occurrences per token, reset after use
  std::vector<uint8_t> seen_;    // token in prompt or output
  std::vector<Candidate> cand_;
  bool cand_sorted_ = false;
  std::unique_ptr<grammar::GrammarConstraint> constraint_;
  size_t grammar_synced_ = 0;  // output tokens fed to constraint_
  ReasoningBudgetTracker budget_;
};

// log-softmax of logits at `token`.
float log_softmax_at(std::span<const float> logits, int32_t token);
// log-sum-exp of logits: log_softmax(x)[t] = x[t] - log_sum_exp(x).
double log_sum_exp(std::span<const float> logits);
// The k most likely tokens of log_softmax(logits), most likely first (ties: lower id).
std::vector<TopLogprob> top_log_softmax(std::span<const float> logits, int k);

}  // namespace seer
