#include "predict/length_predictor.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace seer {
namespace {

TEST(LengthBuckets, EqualWidthsCoverMaxLenAndClampTheTail) {
  LengthBuckets b = LengthBuckets::equal(2048, 10);
  EXPECT_EQ(b.count, 10);
  EXPECT_EQ(b.width, 205);
  EXPECT_EQ(b.bucket_of(0), 0);
  EXPECT_EQ(b.bucket_of(204), 0);
  EXPECT_EQ(b.bucket_of(205), 1);
  EXPECT_EQ(b.bucket_of(5000), 9);
  EXPECT_EQ(b.upper_bound(0), 205);
  EXPECT_THROW(LengthBuckets::equal(0, 10), Error);
  EXPECT_THROW(LengthBuckets::equal(100, 0), Error);
}

TEST(OraclePredictor, ReturnsTheTrueLengthAndItsBucket) {
  OraclePredictor oracle(LengthBuckets::equal(320, 10));
  LengthQuery r;
  r.true_output_len = 70;
  LengthPrediction p = oracle.predict(r);
  EXPECT_EQ(p.tokens, 70);
  EXPECT_EQ(p.bucket, 2);
  r.true_output_len = -1;
  EXPECT_THROW(oracle.predict(r), Error);
}

TEST(MakeLengthPredictor, BuildsTheOracleAndRejectsUnknownSpecs) {
  PredictorOptions o;
  EXPECT_EQ(make_length_predictor("oracle", o)->name(), "oracle");
  EXPECT_THROW(make_length_predictor("/no/such/predictor.file", o), Error);
}

}  // namespace
}  // namespace seer
