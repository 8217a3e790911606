#include "predict/noisy_predictor.h"

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

#include "common/error.h"
#include "support/test_paths.h"

namespace seer {
namespace {

BucketErrorDistribution offsets() {
  BucketErrorDistribution d;
  d.source = "test";
  d.offsets = {{-1, 0.25}, {1, 0.5}, {2, 0.25}};
  return d;
}

LengthQuery with_length(int32_t len) {
  LengthQuery r;
  r.true_output_len = len;
  return r;
}

TEST(NoisyPredictor, HitsTheAccuracyAndDrawsTheMeasuredOffsets) {
  const auto buckets = LengthBuckets::equal(1000, 10);
  NoisyPredictor p(0.8, buckets, offsets(), 42);
  const int n = 20000;
  int right = 0;
  std::map<int32_t, int> wrong;
  for (int i = 0; i < n; ++i) {
    LengthPrediction pr = p.predict(with_length(450));  // bucket 4: every offset fits
    EXPECT_EQ(pr.tokens, buckets.upper_bound(pr.bucket));
    if (pr.bucket == 4)
      ++right;
    else
      ++wrong[pr.bucket - 4];
  }
  EXPECT_NEAR(right / double(n), 0.8, 0.01);
  const double w = n - right;
  ASSERT_EQ(wrong.size(), 3u);
  EXPECT_NEAR(wrong[-1] / w, 0.25, 0.03);
  EXPECT_NEAR(wrong[1] / w, 0.5, 0.03);
  EXPECT_NEAR(wrong[2] / w, 0.25, 0.03);
}

TEST(NoisyPredictor, StaysInRangeAndIsDeterministicForASeed) {
  const auto buckets = LengthBuckets::equal(1000, 10);
  NoisyPredictor a(0.0, buckets, offsets(), 7), b(0.0, buckets, offsets(), 7);
  for (int i = 0; i < 2000; ++i) {
    const int32_t len = (i * 37) % 1200;
    LengthPrediction pa = a.predict(with_length(len)), pb = b.predict(with_length(len));
    EXPECT_EQ(pa.bucket, pb.bucket);
    EXPECT_GE(pa.bucket, 0);
    EXPECT_LT(pa.bucket, 10);
    EXPECT_NE(pa.bucket, buckets.bucket_of(len));  // accuracy 0: always a neighbour
  }
  NoisyPredictor one(0.0, LengthBuckets::equal(100, 1), offsets(), 1);
  EXPECT_EQ(one.predict(with_length(50)).bucket, 0);  // nowhere else to go
}

TEST(NoisyPredictor, RejectsBadSpecsAndRequestsWithoutLengths) {
  PredictorOptions o;
  o.buckets = LengthBuckets::equal(2048, 10);
  EXPECT_THROW(make_length_predictor("noisy:1.5", o), Error);
  EXPECT_THROW(make_length_predictor("noisy:abc", o), Error);
  EXPECT_THROW(make_length_predictor("noisy:", o), Error);
  o.error_distribution = "/no/such/errors.json";
  EXPECT_THROW(make_length_predictor("noisy:0.9", o), Error);
  NoisyPredictor p(0.9, o.buckets, offsets(), 1);
  EXPECT_THROW(p.predict(LengthQuery{}), Error);
  EXPECT_THROW(NoisyPredictor(0.9, o.buckets, BucketErrorDistribution{}, 1), Error);
}

TEST(NoisyPredictor, ErrorDistributionFilesRoundTripAndTheCommittedOneLoads) {
  const std::string path = testing::scratch_dir() + "/errors.json";
  save_error_distribution(path, offsets());
  auto d = load_error_distribution(path);
  EXPECT_EQ(d.offsets, offsets().offsets);
  EXPECT_EQ(d.source, "test");
  PredictorOptions o;
  o.buckets = LengthBuckets::equal(2048, 10);
  o.error_distribution = path;
  EXPECT_EQ(make_length_predictor("noisy:0.9", o)->name(), "noisy:0.9");
  o.error_distribution.clear();  // data/predict/bucket_errors.json
  EXPECT_EQ(make_length_predictor("noisy:0.9", o)->name(), "noisy:0.9");
  {
    std::ofstream bad(path);
    bad << R"({"offsets": {"x": 1}})";
  }
  EXPECT_THROW(load_error_distribution(path), Error);
}

}  // namespace
}  // namespace seer
