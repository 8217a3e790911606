#pragma once
// Features of a prompt for the trained length predictor (docs/predictor.md): hashed
// word unigrams and bigrams, optional hashed character n-grams, and one-hot bins of
// the prompt's length, all in one sparse vector of fixed dimension. The hash is
// FNV-1a 64 (stable across platforms and runs), so a saved predictor reproduces
// its features anywhere.
#include <cstdint>
#include <string_view>
#include <vector>

namespace seer {

struct FeatureConfig {
  int32_t hash_bits = 16;      // 2^hash_bits hashed slots
  bool word_bigrams = true;
  int32_t char_ngram = 0;      // 0: none; n: hashed character n-grams of each word
  bool length_bins = true;     // one-hot log2 bins of word and line counts
  bool operator==(const FeatureConfig&) const = default;
};

struct SparseFeature {
  uint32_t index = 0;
  float value = 0;
};
using FeatureVector = std::vector<SparseFeature>;

uint64_t fnv1a64(std::string_view s, uint64_t seed = 14695981039346656037ull);

class TextFeaturizer {
 public:
  // Throws seer::Error when hash_bits is outside [8, 24] or char_ngram outside [0, 8].
  explicit TextFeaturizer(FeatureConfig config);
  const FeatureConfig& config() const { return config_; }
  // Hashed slots, then the length bins, then a constant bias feature.
  int32_t dimension() const { return dimension_; }
  // Indices unique and sorted; hashed features scaled to unit L2 norm.
  FeatureVector extract(std::string_view text) const;

 private:
  FeatureConfig config_;
  int32_t dimension_ = 0;
};

// Lower-cased ASCII words (runs of letters and digits; other bytes of UTF-8 text are
// kept inside words, punctuation splits them).
std::vector<std::string_view> split_words(std::string_view text, std::vector<char>& lowered);

}  // namespace seer
