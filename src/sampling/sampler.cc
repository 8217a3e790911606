#include "sampling/sampler.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "common/error.h"

namespace seer {
namespace {

// Candidates are ordered by probability, then by token id, so the walk of the
// cumulative distribution is the same for the same logits.
bool higher(const Sampler::Candidate& a, const Sampler::Candidate& b) {
  return a.prob > b.prob || (a.prob == b.prob && a.token < b.token);
}

// When top-p needs the distribution sorted, try the head first: LLM distributions
// usually reach top_p within a few hundred tokens.
constexpr size_t kTopPHead = 256;

}  // namespace

double log_sum_exp(std::span<const float> logits) {
  float mx = -std::numeric_limits<float>::infinity();
  for (float v : logits) mx = std::max(mx, v);
  double sum = 0.0;
  for (float v : logits) sum += std::exp(static_cast<double>(v - mx));
  return static_cast<double>(mx) + std::log(sum);
}

float log_softmax_at(std::span<const float> logits, int32_t token) {
  return static_cast<float>(static_cast<double>(logits[token]) - log_sum_exp(logits));
}

std::vector<TopLogprob> top_log_softmax(std::span<const float> logits, int k) {
  const auto n = static_cast<int32_t>(logits.size());
  k = std::clamp(k, 0, static_cast<int>(n));
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int32_t t = 0; t < n; ++t) ids[static_cast<size_t>(t)] = t;
  auto more_likely = [&](int32_t a, int32_t b) { return logits[a] > logits[b] || (logits[a] == logits[b] && a < b); };
  std::partial_sort(ids.begin(), ids.begin() + k, ids.end(), more_likely);
  const double lse = log_sum_exp(logits);
  std::vector<TopLogprob> out;
  out.reserve(static_cast<size_t>(k));
  for (int i = 0; i < k; ++i) out.push_back({ids[i], static_cast<float>(static_cast<double>(logits[ids[i]]) - lse)});
  return out;
}

Sampler::Sampler(const SamplingParams& params, uint64_t seed)
    : params_(params), rng_(params.seed.value_or(seed)), budget_(params.reasoning_budget) {
  if (params_.grammar) constraint_ = std::make_unique<grammar::GrammarConstraint>(params_.grammar);
}

void Sampler::sync_grammar(std::span<const int32_t> output) {
  // Tokens sampled since the last call (normally one) move the grammar on. A token
  // the grammar refuses cannot come from this sampler; it is skipped.
  for (; grammar_synced_ < output.size(); ++grammar_synced_) (void)constraint_->accept(output[grammar_synced_]);
}

void Sampler::prepare(std::span<const int32_t> output) {
  if (!constraint_) return;
  sync_grammar(output);
  (void)constraint_->mask();
}

void Sampler::load(std::span<const float> logits, std::span<const int32_t> output) {
  work_.assign(logits.begin(), logits.end());
  if (!constraint_) return;
  sync_grammar(output);
  constraint_->apply(work_);
}

void Sampler::apply_penalties(std::span<const int32_t> prompt, std::span<const int32_t> output) {
  apply_logit_bias();
  const bool repetition = params_.repetition_penalty != 1.0f;
  const bool frequency = params_.frequency_penalty != 0.0f || params_.presence_penalty != 0.0f;
  if (!repetition && !frequency) return;
  const auto vocab = static_cast<int32_t>(work_.size());
  if (seen_.size() != work_.size()) {
    seen_.assign(work_.size(), 0);
    counts_.assign(work_.size(), 0);
  }
  auto valid = [&](int32_t t) { return t >= 0 && t < vocab; };
  if (repetition) {
    const float r = params_.repetition_penalty;
    auto penalize = [&](int32_t t) {
      if (!valid(t) || seen_[t]) return;
      seen_[t] = 1;
      work_[t] = work_[t] > 0 ? work_[t] / r : work_[t] * r;
    };
    for (int32_t t : prompt) penalize(t);
    for (int32_t t : output) penalize(t);
    for (int32_t t : prompt)
      if (valid(t)) seen_[t] = 0;
    for (int32_t t : output)
      if (valid(t)) seen_[t] = 0;
  }
  if (frequency) {
    for (int32_t t : output)
      if (valid(t)) ++counts_[t];
    for (int32_t t : output) {
      if (!valid(t) || counts_[t] == 0) continue;
      work_[t] -= params_.frequency_penalty * static_cast<float>(counts_[t]) + params_.presence_penalty;
      counts_[t] = 0;
    }
  }
}

void Sampler::apply_logit_bias() {
  const auto vocab = static_cast<int32_t>(work_.size());
  for (const auto& [token, bias] : params_.logit_bias)
    if (token >= 0 && token < vocab) work_[token] += bias;
}

void Sampler::truncate() {
  const auto vocab = static_cast<int32_t>(work_.size());
  const float inv_t = 1.0f / params_.temperature;
  cand_.resize(work_.size());
  for (int32_t t = 0; t < vocab; ++t) cand_[t] = {t, work_[t] * inv_t};  // prob holds the scaled logit for now
  cand_sorted_ = false;
  if (params_.top_k > 0 && params_.top_k < vocab) {
    std::nth_element(cand_.begin(), cand_.begin() + params_.top_k, cand_.end(), higher);
    cand_.resize(params_.top_k);
    std::sort(cand_.begin(), cand_.end(), higher);
    cand_sorted_ = true;
  }
  float mx = -std::numeric_limits<float>::infinity();
  for (const auto& c : cand_) mx = std::max(mx, c.prob);
  double sum = 0.0;
  for (auto& c : cand_) {
    c.prob = std::exp(c.prob - mx);
    sum += c.prob;
  }
  for (auto& c : cand_) c.prob = static_cast<float>(c.prob / sum);
  if (constraint_) std::erase_if(cand_, [](const Candidate& c) { return c.prob == 0.0f; });  // refused tokens

  if (params_.top_p < 1.0f && cand_.size() > 1) {
    auto keep_prefix = [&](size_t n) -> bool {  // true if the first n reach top_p
      double cum = 0.0;
      for (size_t i = 0; i < n; ++i) {
        cum += cand_[i].prob;
        if (cum >= params_.top_p) {
          cand_.resize(i + 1);
          return true;
        }
      }
      return false;
    };
    bool done = false;
    if (!cand_sorted_ && cand_.size() > 2 * kTopPHead) {
      std::partial_sort(cand_.begin(), cand_.begin() + kTopPHead, cand_.end(), higher);
      done = keep_prefix(kTopPHead);
    }
    if (!done) {
      if (!cand_sorted_) std::sort(cand_.begin(), cand_.end(), higher);
      keep_prefix(cand_.size());
    }
    cand_sorted_ = true;
  }
  if (params_.min_p > 0.0f) {
    float pmax = 0.0f;
    for (const auto& c : cand_) pmax = std::max(pmax, c.prob);
    const float threshold = params_.min_p * pmax;
    std::erase_if(cand_, [&](const Candidate& c) { return c.prob < threshold; });
  }
  double total = 0.0;
  for (const auto& c : cand_) total += c.prob;
  for (auto& c : cand_) c.prob = static_cast<float>(c.prob / total);
}

std::vector<Sampler::Candidate> Sampler::candidates(std::span<const float> logits, std::span<const int32_t> prompt,
                                                    std::span<const int32_t> output) {
  load(logits, output);
  apply_penalties(prompt, output);
  if (params_.temperature == 0.0f) {
    const auto best = std::max_element(work_.begin(), work_.end()) - work_.begin();
    return {{static_cast<int32_t>(best), 1.0f}};
  }
  truncate();
  return cand_;
}

SampleResult Sampler::sample(std::span<const float> logits, std::span<const int32_t> prompt,
                             std::span<const int32_t> output) {
  if (logits.empty()) fail("sampler: empty logits");
  SampleResult r;
  if (const std::optional<int32_t> forced = budget_.forced(output)) {
    r.token = *forced;  // the reasoning ran out of budget: its close tag
  } else {
    draw(logits, prompt, output, r);
  }
  if (!params_.logprobs) return r;
  r.logprob = log_softmax_at(logits, r.token);
  if (params_.top_logprobs > 0) r.top = top_log_softmax(logits, params_.top_logprobs);
  return r;
}

void Sampler::draw(std::span<const float> logits, std::span<const int32_t> prompt, std::span<const int32_t> output,
                   SampleResult& r) {
  load(logits, output);
  apply_penalties(prompt, output);
  if (params_.temperature == 0.0f) {
    r.token = static_cast<int32_t>(std::max_element(work_.begin(), work_.end()) - work_.begin());
  } else {
    truncate();
    const double u = rng_.uniform();
    double cum = 0.0;
    r.token = cand_.back().token;
    for (const auto& c : cand_) {
      cum += c.prob;
      if (u < cum) {
        r.token = c.token;
        break;
      }
    }
  }
}

}  // namespace seer
