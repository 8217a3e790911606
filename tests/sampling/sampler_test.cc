#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "common/error.h"
#include "sampling/sampler.h"

namespace seer {
namespace {

using Span = std::span<const int32_t>;

std::vector<float> logits_from_probs(const std::vector<double>& p) {
  std::vector<float> l;
  for (double v : p) l.push_back(static_cast<float>(std::log(v)));
  return l;
}

SamplingParams params(float temperature) {
  SamplingParams p;
  p.temperature = temperature;
  return p;
}

void expect_error_mentions(const SamplingParams& p, const std::string& field) {
  try {
    p.validate();
    ADD_FAILURE() << "no error for " << field;
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
  }
}

TEST(SamplingParams, ValidateNamesTheBadField) {
  SamplingParams ok;
  EXPECT_NO_THROW(ok.validate());
  SamplingParams p;
  p.temperature = -0.5f;
  expect_error_mentions(p, "temperature");
  p = {};
  p.temperature = NAN;
  expect_error_mentions(p, "temperature");
  p = {};
  p.top_p = 0.0f;
  expect_error_mentions(p, "top_p");
  p = {};
  p.top_p = 1.5f;
  expect_error_mentions(p, "top_p");
  p = {};
  p.top_k = -1;
  expect_error_mentions(p, "top_k");
  p = SamplingParams{};
  p.top_logprobs = 21;
  expect_error_mentions(p, "top_logprobs");
  p = {};
  p.min_p = 1.1f;
  expect_error_mentions(p, "min_p");
  p = {};
  p.repetition_penalty = 0.0f;
  expect_error_mentions(p, "repetition_penalty");
  p = {};
  p.frequency_penalty = 3.0f;
  expect_error_mentions(p, "frequency_penalty");
  p = {};
  p.presence_penalty = -2.5f;
  expect_error_mentions(p, "presence_penalty");
  p = {};
  p.max_tokens = 0;
  expect_error_mentions(p, "max_tokens");
  p = {};
  p.stop = {"ok", ""};
  expect_error_mentions(p, "stop[1]");
}

TEST(SamplingParams, ValidateAcceptsTheEndsOfEachRange) {
  SamplingParams p;
  p.temperature = 0.0f;
  p.top_p = 1.0f;
  p.top_k = 0;
  p.min_p = 1.0f;
  p.frequency_penalty = 2.0f;
  p.presence_penalty = -2.0f;
  p.max_tokens = 1;
  p.logit_bias = {{0, 100.0f}, {1, -100.0f}};
  EXPECT_NO_THROW(p.validate());
  p.min_p = 0.0f;
  p.frequency_penalty = -2.0f;
  p.presence_penalty = 2.0f;
  EXPECT_NO_THROW(p.validate());
}

TEST(Sampler, TopLogprobsAreTheRawDistributionsLargestMostLikelyFirst) {
  const std::vector<float> logits = {0.5f, 3.0f, -1.0f, 3.0f, 2.0f, -4.0f};
  SamplingParams p;
  p.temperature = 0.3f;
  p.top_k = 1;
  p.repetition_penalty = 2.0f;
  p.seed = 3;
  p.logprobs = true;
  p.top_logprobs = 3;
  Sampler s(p, 1);
  const std::vector<int32_t> prompt = {1, 3};
  SampleResult r = s.sample(logits, prompt, {});
  ASSERT_EQ(r.top.size(), 3u);
  // Ties go to the lower id; penalties and temperature do not change them.
  EXPECT_EQ(r.top[0].token, 1);
  EXPECT_EQ(r.top[1].token, 3);
  EXPECT_EQ(r.top[2].token, 4);
  for (const TopLogprob& t : r.top) EXPECT_NEAR(t.logprob, log_softmax_at(logits, t.token), 1e-6);
  EXPECT_EQ(top_log_softmax(logits, 50).size(), logits.size());
  p.top_logprobs = 0;
  EXPECT_TRUE(Sampler(p, 1).sample(logits, prompt, {}).top.empty());
}

TEST(Sampler, GreedyTakesArgmaxLowestIdOnTies) {
  Sampler s(params(0.0f), 1);
  std::vector<float> l = {0.1f, 2.0f, -1.0f, 2.0f};
  EXPECT_EQ(s.sample(l, {}, {}).token, 1);
}

TEST(Sampler, TopKKeepsTheKLargest) {
  SamplingParams p = params(1.0f);
  p.top_k = 2;
  Sampler s(p, 1);
  auto c = s.candidates(logits_from_probs({0.1, 0.4, 0.2, 0.3}), {}, {});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].token, 1);
  EXPECT_EQ(c[1].token, 3);
  EXPECT_NEAR(c[0].prob, 0.4 / 0.7, 1e-6);
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  SamplingParams p = params(1.0f);
  p.top_p = 0.75f;
  Sampler s(p, 1);
  auto c = s.candidates(logits_from_probs({0.05, 0.5, 0.15, 0.3}), {}, {});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].token, 1);
  EXPECT_EQ(c[1].token, 3);
  p.top_p = 0.85f;
  Sampler s2(p, 1);
  EXPECT_EQ(s2.candidates(logits_from_probs({0.05, 0.5, 0.15, 0.3}), {}, {}).size(), 3u);
}

// The cumulative probability reaches top_p exactly at the second of four equal
// candidates (0.25 + 0.25 = 0.5): that one is kept, the third is not.
TEST(Sampler, TopPKeepsTheCandidateWhereTheSumReachesPExactly) {
  SamplingParams p = params(1.0f);
  p.top_p = 0.5f;
  Sampler s(p, 1);
  auto c = s.candidates(std::vector<float>(4, 0.0f), {}, {});
  ASSERT_EQ(c.size(), 2u);
  EXPECT_EQ(c[0].token, 0);  // ties: lowest id first
  EXPECT_EQ(c[1].token, 1);
  EXPECT_FLOAT_EQ(c[0].prob, 0.5f);
  EXPECT_FLOAT_EQ(c[1].prob, 0.5f);
}

// The same boundary on a vocabulary large enough for the sorted-head shortcut:
// 1024 equal logits, each exactly 1/1024. top_p = 0.25 is reached exactly inside the
// head (256 candidates); 0.5 only after it (the full sort, 512).
TEST(Sampler, TopPBoundaryInsideAndPastTheSortedHead) {
  for (auto [top_p, expected] : {std::pair{0.25f, 256u}, std::pair{0.5f, 512u}}) {
    SamplingParams p = params(1.0f);
    p.top_p = top_p;
    Sampler s(p, 1);
    auto c = s.candidates(std::vector<float>(1024, 0.0f), {}, {});
    EXPECT_EQ(c.size(), expected) << top_p;
    for (size_t i = 0; i < c.size(); ++i) ASSERT_EQ(c[i].token, static_cast<int32_t>(i)) << top_p;
  }
}

TEST(Sampler, TopPOnLargeVocabularyMatchesFullSort) {
  std::mt19937 rng(3);
  std::normal_distribution<float> d(0.0f, 3.0f);
  for (float top_p : {0.2f, 0.9f, 0.999f}) {
    std::vector<float> l(5000);
    for (auto& v : l) v = d(rng);
    SamplingParams p = params(0.7f);
    p.top_p = top_p;
    Sampler s(p, 1);
    auto c = s.candidates(l, {}, {});
    // Brute force.
    std::vector<std::pair<double, int>> probs;
    double mx = *std::max_element(l.begin(), l.end()), sum = 0;
    for (float v : l) sum += std::exp((v - mx) / 0.7);
    for (int i = 0; i < 5000; ++i) probs.push_back({std::exp((l[i] - mx) / 0.7) / sum, i});
    std::sort(probs.begin(), probs.end(), [](auto a, auto b) { return a.first > b.first; });
    size_t n = 0;
    double cum = 0;
    while (cum < top_p) cum += probs[n++].first;
    ASSERT_EQ(c.size(), n) << top_p;
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(c[i].token, probs[i].second);
  }
}

TEST(Sampler, MinPDropsTokensBelowAFractionOfTheBest) {
  SamplingParams p = params(1.0f);
  p.min_p = 0.5f;
  Sampler s(p, 1);
  auto c = s.candidates(logits_from_probs({0.1, 0.4, 0.19, 0.31}), {}, {});
  ASSERT_EQ(c.size(), 2u);  // 0.4 and 0.31 >= 0.2
  std::set<int32_t> kept;
  for (auto& x : c) kept.insert(x.token);
  EXPECT_EQ(kept, (std::set<int32_t>{1, 3}));
  double total = 0;
  for (auto& x : c) total += x.prob;
  EXPECT_NEAR(total, 1.0, 1e-6);
}

// A candidate exactly at min_p * p_max stays: with equal logits and min_p = 1 all do.
TEST(Sampler, MinPKeepsCandidatesExactlyAtTheThreshold) {
  SamplingParams p = params(1.0f);
  p.min_p = 1.0f;
  Sampler s(p, 1);
  auto c = s.candidates(std::vector<float>(4, 0.0f), {}, {});
  ASSERT_EQ(c.size(), 4u);
  for (const auto& x : c) EXPECT_FLOAT_EQ(x.prob, 0.25f);
}

TEST(Sampler, TemperatureSharpensAndFlattens) {
  auto l = logits_from_probs({0.2, 0.8});
  Sampler cold(params(0.5f), 1), hot(params(2.0f), 1);
  auto c = cold.candidates(l, {}, {});
  auto h = hot.candidates(l, {}, {});
  EXPECT_NEAR(c[1].prob, 0.64 / 0.68, 1e-5);  // p^2 renormalized
  EXPECT_NEAR(h[1].prob, std::sqrt(0.8) / (std::sqrt(0.8) + std::sqrt(0.2)), 1e-5);
}

TEST(Sampler, RepetitionPenaltyOverPromptAndOutput) {
  SamplingParams p = params(0.0f);
  p.repetition_penalty = 2.0f;
  Sampler s(p, 1);
  // Token 0 (logit 3) seen in the prompt -> 1.5; token 2 (logit -1) in output -> -2.
  std::vector<float> l = {3.0f, 2.0f, -1.0f};
  EXPECT_EQ(s.sample(l, std::vector<int32_t>{0}, {}).token, 1);
  SamplingParams q = params(1.0f);
  q.repetition_penalty = 2.0f;
  Sampler t(q, 1);
  auto c = t.candidates(l, std::vector<int32_t>{0, 0}, std::vector<int32_t>{2});
  std::map<int, double> prob;
  for (auto& x : c) prob[x.token] = x.prob;
  const double z = std::exp(1.5) + std::exp(2.0) + std::exp(-2.0);
  EXPECT_NEAR(prob[0], std::exp(1.5) / z, 1e-6);
  EXPECT_NEAR(prob[2], std::exp(-2.0) / z, 1e-6);
}

TEST(Sampler, FrequencyAndPresencePenaltiesCountOutputOnly) {
  SamplingParams p = params(1.0f);
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  Sampler s(p, 1);
  std::vector<float> l = {1.0f, 1.0f, 1.0f};
  // Token 0 twice in the output: 1 - 2*0.5 - 0.25; token 1 only in the prompt: unchanged.
  auto c = s.candidates(l, std::vector<int32_t>{1}, std::vector<int32_t>{0, 2, 0});
  std::map<int, double> prob;
  for (auto& x : c) prob[x.token] = x.prob;
  const double e0 = std::exp(-0.25), e1 = std::exp(1.0), e2 = std::exp(0.25);
  EXPECT_NEAR(prob[0], e0 / (e0 + e1 + e2), 1e-6);
  EXPECT_NEAR(prob[1], e1 / (e0 + e1 + e2), 1e-6);
}

TEST(Sampler, SameSeedSameTokensDifferentSeedDifferent) {
  std::mt19937 rng(5);
  std::normal_distribution<float> d;
  std::vector<std::vector<float>> steps(50, std::vector<float>(100));
  for (auto& st : steps)
    for (auto& v : st) v = d(rng);
  auto run = [&](uint64_t seed, bool use_param_seed) {
    SamplingParams p = params(1.0f);
    if (use_param_seed) p.seed = seed;
    Sampler s(p, use_param_seed ? 999 : seed);
    std::vector<int32_t> out;
    for (auto& st : steps) out.push_back(s.sample(st, {}, out).token);
    return out;
  };
  EXPECT_EQ(run(42, true), run(42, true));
  EXPECT_EQ(run(42, true), run(42, false));  // params.seed wins over the fallback seed
  EXPECT_NE(run(42, true), run(43, true));
}

TEST(Sampler, DrawsFollowTheDistribution) {
  Sampler s(params(1.0f), 11);
  const std::vector<double> p = {0.5, 0.3, 0.15, 0.05};
  auto l = logits_from_probs(p);
  std::vector<int> hits(4);
  const int n = 20000;
  for (int i = 0; i < n; ++i) hits[s.sample(l, {}, {}).token]++;
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(hits[i] / double(n), p[i], 0.015) << i;
}

TEST(Sampler, LogprobIsLogSoftmaxOfRawLogits) {
  SamplingParams p = params(0.0f);
  p.logprobs = true;
  p.repetition_penalty = 1.5f;  // penalties do not change the reported logprob
  Sampler s(p, 1);
  std::vector<float> l = {1.0f, 3.0f, 0.5f};
  auto r = s.sample(l, std::vector<int32_t>{0}, {});
  EXPECT_EQ(r.token, 1);
  const double z = std::exp(1.0) + std::exp(3.0) + std::exp(0.5);
  EXPECT_NEAR(r.logprob, 3.0 - std::log(z), 1e-6);
}

TEST(Sampler, LogitBiasForcesAndBansTokens) {
  const std::vector<float> l = {0.0f, 5.0f, 1.0f, 0.5f};
  SamplingParams force = params(0.0f);
  force.logit_bias = {{3, 100.0f}};
  EXPECT_EQ(Sampler(force, 1).sample(l, {}, {}).token, 3);
  SamplingParams ban = params(0.0f);
  ban.logit_bias = {{1, -100.0f}};
  EXPECT_EQ(Sampler(ban, 1).sample(l, {}, {}).token, 2);
  // Sampled (not greedy): a +100 bias leaves the other tokens no probability mass.
  SamplingParams hot = params(1.0f);
  hot.logit_bias = {{0, 100.0f}};
  Sampler s(hot, 7);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(s.sample(l, {}, {}).token, 0);
  SamplingParams bad = params(0.0f);
  bad.logit_bias = {{0, 100.5f}};
  EXPECT_THROW(bad.validate(), Error);
}

}  // namespace
}  // namespace seer
