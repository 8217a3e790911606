#pragma once
// Speculative decoding's drafters (docs/speculative.md). After each step the engine
// asks its proposer for the tokens likely to follow a request's sequence; the
// scheduler verifies as many as its token budget and KV allow in the request's next
// sampled chunk (ScheduledChunk::num_draft), and the executor keeps those its own
// sampler agrees with. A proposer only guesses: a wrong draft costs compute, never
// a different output.
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kv/kv_types.h"

namespace seer {

// Called on the engine thread only. A proposer may keep state per request (a draft
// model's K/V, model_draft_proposer.h); the engine tells it when a request no longer
// needs it.
class DraftProposer {
 public:
  virtual ~DraftProposer() = default;
  virtual std::string name() const = 0;
  // Up to max_tokens() tokens (fewer, or none, when it has no guess) likely to
  // follow request `id`'s sequence (prompt then output), at most `limit` of them.
  virtual std::vector<int32_t> propose(RequestId id, std::span<const int32_t> prompt,
                                       std::span<const int32_t> output, int32_t limit) = 0;
  // The engine finished, aborted or preempted request `id`: free what is kept for
  // it. A later propose() for the same id starts from nothing again.
  virtual void forget(RequestId id) {}
  virtual int32_t max_tokens() const = 0;
  // Seconds one proposed token costs on the engine thread, for the gate's
  // break-even (engine/speculation_gate.h); 0 where it is negligible (prompt lookup).
  virtual double seconds_per_draft() const { return 0; }
};

// Prompt-lookup decoding (llama.cpp's --lookup, "prompt lookup decoding"): the last
// n tokens (n = max_ngram down to min_ngram, longest first) are looked up in the
// sequence before them; the most recent earlier occurrence's continuation is the
// draft (continued periodically when it reaches the end of the sequence). Input-grounded outputs (editing, quoting, summarising a given text) repeat
// n-grams of their prompt, so the drafts are often right. Needs no second model.
class NgramDraftProposer final : public DraftProposer {
 public:
  // Throws seer::Error unless 1 <= min_ngram <= max_ngram and max_tokens >= 1.
  NgramDraftProposer(int32_t max_tokens, int32_t min_ngram = 1, int32_t max_ngram = 3);
  std::string name() const override { return "ngram"; }
  std::vector<int32_t> propose(RequestId id, std::span<const int32_t> prompt, std::span<const int32_t> output,
                               int32_t limit) override;
  int32_t max_tokens() const override { return max_tokens_; }

 private:
  int32_t max_tokens_;
  int32_t min_ngram_;
  int32_t max_ngram_;
};

// The simulator's drafter. Simulated sequences carry lengths, not text, so there is
// nothing to look up: it proposes max_tokens copies of `token` (the id every
// simulated sample returns), and the SimExecutor's modelled acceptance rate decides
// how many are accepted.
class FixedDraftProposer final : public DraftProposer {
 public:
  // `seconds_per_draft`: a modelled draft model's time per proposed token (0: free).
  FixedDraftProposer(int32_t max_tokens, int32_t token, double seconds_per_draft = 0);
  std::string name() const override { return "modelled"; }
  double seconds_per_draft() const override { return seconds_per_draft_; }
  std::vector<int32_t> propose(RequestId, std::span<const int32_t>, std::span<const int32_t>,
                               int32_t limit) override;
  int32_t max_tokens() const override { return max_tokens_; }

 private:
  int32_t max_tokens_;
  int32_t token_;
  double seconds_per_draft_;
};

}  // namespace seer
