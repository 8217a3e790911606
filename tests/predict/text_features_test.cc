#include "predict/text_features.h"

#include <cmath>

#include <gtest/gtest.h>

#include "common/error.h"

namespace seer {
namespace {

TEST(TextFeatures, Fnv1aMatchesTheReferenceValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ull);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cull);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ull);
}

TEST(TextFeatures, SplitsLowercasedWordsAndKeepsPunctuationMarks) {
  std::vector<char> buf;
  auto w = split_words("Write a 5-word POEM, please?", buf);
  std::vector<std::string> got(w.begin(), w.end());
  EXPECT_EQ(got, (std::vector<std::string>{"write", "a", "5", "-", "word", "poem", ",", "please", "?"}));
  EXPECT_TRUE(split_words("   ", buf).empty());
}

TEST(TextFeatures, VectorIsSortedUniqueUnitNormWithLengthBinsAndBias) {
  TextFeaturizer f(FeatureConfig{12, true, 3, true});
  EXPECT_EQ(f.dimension(), (1 << 12) + 24 + 1);
  auto x = f.extract("the cat saw the cat");
  ASSERT_GE(x.size(), 4u);
  double norm = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (i > 0) {
      EXPECT_LT(x[i - 1].index, x[i].index);
    }
    EXPECT_LT(x[i].index, static_cast<uint32_t>(f.dimension()));
    if (x[i].index < (1u << 12)) norm += x[i].value * x[i].value;
  }
  EXPECT_NEAR(norm, 1.0, 1e-5);
  EXPECT_EQ(x.back().index, static_cast<uint32_t>(f.dimension() - 1));  // bias
  EXPECT_EQ(x.back().value, 1.f);
  // Same text, same features; a different text differs.
  auto y = f.extract("the cat saw the cat");
  ASSERT_EQ(x.size(), y.size());
  for (size_t i = 0; i < x.size(); ++i) EXPECT_EQ(x[i].index, y[i].index);
  EXPECT_NE(f.extract("a dog").size(), x.size());
}

TEST(TextFeatures, BigramsAddSlotsAndEmptyTextHasOnlyLengthAndBias) {
  TextFeaturizer uni(FeatureConfig{16, false, 0, true}), bi(FeatureConfig{16, true, 0, true});
  EXPECT_GT(bi.extract("write a long story").size(), uni.extract("write a long story").size());
  auto empty = uni.extract("");
  ASSERT_EQ(empty.size(), 3u);  // word-count bin, line-count bin, bias
  EXPECT_GE(empty[0].index, 1u << 16);
}

TEST(TextFeatures, RejectsBadConfigs) {
  EXPECT_THROW(TextFeaturizer(FeatureConfig{4, true, 0, true}), Error);
  EXPECT_THROW(TextFeaturizer(FeatureConfig{16, true, 9, true}), Error);
}

}  // namespace
}  // namespace seer
