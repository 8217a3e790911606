#include "predict/text_features.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "common/error.h"

namespace seer {
namespace {

constexpr int32_t kLengthBins = 12;  // log2 bins of the word count, and of the line count
constexpr uint64_t kBigramSeed = 0x9e3779b97f4a7c15ull;
constexpr uint64_t kCharSeed = 0xc2b2ae3d27d4eb4full;

bool is_word_byte(unsigned char c) { return std::isalnum(c) || c >= 0x80; }

int32_t log2_bin(size_t n) {
  int32_t b = 0;
  while (n > 0 && b < kLengthBins - 1) {
    n >>= 1;
    ++b;
  }
  return b;
}

}  // namespace

uint64_t fnv1a64(std::string_view s, uint64_t seed) {
  uint64_t h = seed;
  for (unsigned char c : s) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

std::vector<std::string_view> split_words(std::string_view text, std::vector<char>& lowered) {
  lowered.assign(text.begin(), text.end());
  for (char& c : lowered) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < lowered.size()) {
    while (i < lowered.size() && !is_word_byte(static_cast<unsigned char>(lowered[i]))) {
      // Punctuation marks are words of their own: "?" and ":" say something about the answer.
      if (!std::isspace(static_cast<unsigned char>(lowered[i]))) words.emplace_back(&lowered[i], 1);
      ++i;
    }
    size_t start = i;
    while (i < lowered.size() && is_word_byte(static_cast<unsigned char>(lowered[i]))) ++i;
    if (i > start) words.emplace_back(&lowered[start], i - start);
  }
  return words;
}

TextFeaturizer::TextFeaturizer(FeatureConfig config) : config_(config) {
  if (config_.hash_bits < 8 || config_.hash_bits > 24)
    fail("predictor features: hash_bits must be in [8, 24], got {}", config_.hash_bits);
  if (config_.char_ngram < 0 || config_.char_ngram > 8)
    fail("predictor features: char_ngram must be in [0, 8], got {}", config_.char_ngram);
  dimension_ = (1 << config_.hash_bits) + (config_.length_bins ? 2 * kLengthBins : 0) + 1;
}

FeatureVector TextFeaturizer::extract(std::string_view text) const {
  std::vector<char> lowered;
  auto words = split_words(text, lowered);
  const uint32_t mask = (1u << config_.hash_bits) - 1;
  std::vector<uint32_t> slots;
  slots.reserve(words.size() * 4);
  for (size_t i = 0; i < words.size(); ++i) {
    const uint64_t h = fnv1a64(words[i]);
    slots.push_back(static_cast<uint32_t>(h) & mask);
    if (config_.word_bigrams && i + 1 < words.size())
      slots.push_back(static_cast<uint32_t>(fnv1a64(words[i + 1], h ^ kBigramSeed)) & mask);
    const int n = config_.char_ngram;
    if (n > 0) {
      std::string padded = "<" + std::string(words[i]) + ">";
      for (size_t k = 0; k + n <= padded.size(); ++k)
        slots.push_back(static_cast<uint32_t>(fnv1a64(std::string_view(padded).substr(k, n), kCharSeed)) & mask);
    }
  }
  std::sort(slots.begin(), slots.end());
  FeatureVector out;
  out.reserve(slots.size() + 3);
  for (size_t i = 0; i < slots.size();) {
    size_t j = i;
    while (j < slots.size() && slots[j] == slots[i]) ++j;
    out.push_back({slots[i], static_cast<float>(j - i)});
    i = j;
  }
  double norm = 0;
  for (const auto& f : out) norm += static_cast<double>(f.value) * f.value;
  const float scale = norm > 0 ? static_cast<float>(1.0 / std::sqrt(norm)) : 0.f;
  for (auto& f : out) f.value *= scale;
  uint32_t next = mask + 1;
  if (config_.length_bins) {
    const size_t lines = static_cast<size_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    out.push_back({next + static_cast<uint32_t>(log2_bin(words.size())), 1.f});
    out.push_back({next + kLengthBins + static_cast<uint32_t>(log2_bin(lines)), 1.f});
    next += 2 * kLengthBins;
  }
  out.push_back({next, 1.f});  // bias
  return out;
}

}  // namespace seer
