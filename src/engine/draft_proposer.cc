#include "engine/draft_proposer.h"

#include <algorithm>

#include "common/error.h"

namespace seer {

NgramDraftProposer::NgramDraftProposer(int32_t max_tokens, int32_t min_ngram, int32_t max_ngram)
    : max_tokens_(max_tokens), min_ngram_(min_ngram), max_ngram_(max_ngram) {
  if (max_tokens_ < 1) fail("ngram drafting: draft tokens must be >= 1 (got {})", max_tokens_);
  if (min_ngram_ < 1 || max_ngram_ < min_ngram_)
    fail("ngram drafting: n-gram sizes must satisfy 1 <= min ({}) <= max ({})", min_ngram_, max_ngram_);
}

std::vector<int32_t> NgramDraftProposer::propose(RequestId, std::span<const int32_t> prompt,
                                                 std::span<const int32_t> output, int32_t limit) {
  const int64_t np = static_cast<int64_t>(prompt.size());
  const int64_t len = np + static_cast<int64_t>(output.size());
  auto at = [&](int64_t i) { return i < np ? prompt[static_cast<size_t>(i)] : output[static_cast<size_t>(i - np)]; };
  const int64_t want = std::min<int64_t>(max_tokens_, limit);
  std::vector<int32_t> draft;
  if (want <= 0) return draft;
  for (int64_t n = std::min<int64_t>(max_ngram_, len - 1); n >= min_ngram_; --n) {
    // The most recent earlier occurrence of the last n tokens [len - n, len).
    for (int64_t s = len - n - 1; s >= 0; --s) {
      int64_t k = 0;
      while (k < n && at(s + k) == at(len - n + k)) ++k;
      if (k < n) continue;
      // The continuation may run into the suffix itself and on into the draft (a
      // copy that overlaps its source, as in LZ77): a text repeating with period P
      // has its most recent match P back and goes on repeating.
      for (int64_t p = s + n; static_cast<int64_t>(draft.size()) < want; ++p)
        draft.push_back(p < len ? at(p) : draft[static_cast<size_t>(p - len)]);
      return draft;
    }
  }
  return draft;
}

FixedDraftProposer::FixedDraftProposer(int32_t max_tokens, int32_t token, double seconds_per_draft)
    : max_tokens_(max_tokens), token_(token), seconds_per_draft_(seconds_per_draft) {
  if (max_tokens_ < 1) fail("modelled drafting: draft tokens must be >= 1 (got {})", max_tokens_);
}

std::vector<int32_t> FixedDraftProposer::propose(RequestId, std::span<const int32_t>, std::span<const int32_t>,
                                                 int32_t limit) {
  return std::vector<int32_t>(static_cast<size_t>(std::clamp(limit, 0, max_tokens_)), token_);
}

}  // namespace seer
