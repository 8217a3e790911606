// The predictor flags shared by `seer sim` and `seer serve`: a trained file plans
// with its predicted bucket's upper end (S3) unless --predictor-reserve estimate;
// its own buckets score accuracy; noisy draws from the given error distribution;
// bad flags name themselves.
#include "predict/predictor_flags.h"

#include <fstream>

#include <gtest/gtest.h>

#include "common/error.h"
#include "predict/length_trainer.h"
#include "predict/predictor_file.h"
#include "support/test_paths.h"

namespace seer {
namespace {

std::string small_predictor_file() {
  TrainOptions o;
  o.features.hash_bits = 10;
  o.max_len = 500;
  o.buckets = LengthBuckets::equal(500, 5);
  o.fine_classes = 12;
  o.epochs = 2;
  std::vector<LengthExample> ex = {{"say hi", 2}, {"write a story about a dragon", 400}, {"list three fruits", 12}};
  PredictorFile f;
  f.model = train_length_model(ex, o);
  const std::string path = testing::scratch_dir() + "/flags-test.seerlp";
  save_predictor_file(path, f);
  return path;
}

TEST(PredictorFlags, TrainedFilesReserveTheBucketBoundUnlessAskedForTheEstimate) {
  PredictorFlags flags;
  flags.spec = small_predictor_file();
  EXPECT_EQ(predictor_buckets(flags, 2048).width, 100);  // the file's buckets, not 2048 / 10
  LengthQuery r;
  r.prompt_text = "say hi";
  auto bound = make_predictor_from_flags(flags, 2048);
  const LengthPrediction b = bound->predict(r);
  EXPECT_EQ(b.tokens, (b.bucket + 1) * 100);

  flags.reserve = "estimate";
  auto estimate = make_predictor_from_flags(flags, 2048);
  const LengthPrediction e = estimate->predict(r);
  EXPECT_EQ(e.bucket, b.bucket);
  EXPECT_EQ(e.tokens, make_length_predictor(flags.spec, PredictorOptions{})->predict(r).tokens);
}

TEST(PredictorFlags, OracleAndNoisyKeepTheirPredictionsAndBadReserveIsNamed) {
  PredictorFlags flags;
  flags.spec = "oracle";
  LengthQuery r;
  r.true_output_len = 37;
  EXPECT_EQ(make_predictor_from_flags(flags, 2048)->predict(r).tokens, 37);
  flags.reserve = "both";
  try {
    (void)make_predictor_from_flags(flags, 2048);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--predictor-reserve"), std::string::npos) << e.what();
  }
}

TEST(PredictorFlags, NoisyDrawsItsWrongBucketsFromTheGivenDistribution) {
  const std::string errors = testing::scratch_dir() + "/two-up.json";
  {
    std::ofstream out(errors);
    out << R"({"source": "test", "offsets": {"2": 1.0}})";
  }
  PredictorFlags flags;
  flags.spec = "noisy:0";  // always wrong
  flags.errors = errors;
  LengthQuery r;
  r.true_output_len = 37;  // bucket 0 of 10 x 205
  auto noisy = make_predictor_from_flags(flags, 2048);
  for (int i = 0; i < 20; ++i) EXPECT_EQ(noisy->predict(r).bucket, 2);

  flags.spec = "oracle";
  try {
    (void)make_predictor_from_flags(flags, 2048);
    FAIL() << "--predictor-errors with an oracle predictor was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("--predictor-errors"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace seer
