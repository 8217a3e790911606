// The `predictions` object of `seer sim --json`: bucket accuracy, under-predictions,
// over-reserved KV and the supervisor's counts.
#include <gtest/gtest.h>

#include "engine/prediction_tally.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

using testing::small_setup;
using testing::synthetic_trace;

Request finished(int32_t prompt, int32_t output, std::optional<int32_t> predicted, int32_t bucket, int32_t reserved) {
  Request r;
  r.prompt_tokens.assign(static_cast<size_t>(prompt), 1);
  r.output_tokens.assign(static_cast<size_t>(output), 2);
  r.predicted_output_len = predicted;
  r.predicted_bucket = bucket;
  r.reserved_tokens = reserved;
  return r;
}

TEST(PredictionTally, ScoresBucketsUnderPredictionsAndOverReservation) {
  PredictionTally t(LengthBuckets{4, 100});
  t.add(finished(10, 150, 200, 1, 230));  // right bucket; 230 - 159 = 71 over
  t.add(finished(10, 250, 200, 1, 410));  // bucket 2, predicted 1: under; 410 - 259 = 151 over
  t.add(finished(10, 50, std::nullopt, -1, 60));  // no prediction: not counted
  PredictionSummary s = t.summary(3, 1, 0);
  ASSERT_TRUE(s.accuracy.has_value());
  EXPECT_DOUBLE_EQ(*s.accuracy, 0.5);
  EXPECT_EQ(s.under_predictions, 1);
  EXPECT_DOUBLE_EQ(s.over_reserved_tokens_mean, (71 + 151) / 2.0);
  EXPECT_EQ(s.reservation_growths, 3);
  EXPECT_EQ(s.supervisor_preemptions, 1);
  EXPECT_FALSE(PredictionTally(std::nullopt).summary(0, 0, 0).accuracy.has_value());
}

TEST(SimPredictions, OracleDrivenS3IsExactAndBeatsMaxAllocationOnBatchSize) {
  auto trace = synthetic_trace(120, 1000.0, 11, 200, 150);
  SimSetup s3 = small_setup("s3", 20000);
  s3.predictor.spec = "oracle";
  s3.scheduler.max_batch_size = 512;
  SimResult r = run_simulation(s3, trace);
  ASSERT_EQ(r.records.size(), trace.size());
  ASSERT_TRUE(r.summary.predictions.has_value());
  const PredictionSummary& p = *r.summary.predictions;
  EXPECT_DOUBLE_EQ(p.accuracy.value_or(-1), 1.0);
  EXPECT_EQ(p.under_predictions, 0);
  EXPECT_EQ(p.reservation_growths, 0);
  EXPECT_EQ(p.supervisor_preemptions, 0);
  EXPECT_GT(p.over_reserved_tokens_mean, 0);  // the 10 % padding
  auto j = summary_json(r.summary);
  ASSERT_TRUE(j.contains("predictions"));
  for (const char* k : {"accuracy", "under_predictions", "over_reserved_tokens_mean", "reservation_growths",
                        "supervisor_preemptions", "retrainings"})
    EXPECT_TRUE(j["predictions"].contains(k)) << k;

  SimSetup orca = small_setup("orca", 20000);
  orca.scheduler.max_batch_size = 512;
  SimResult o = run_simulation(orca, trace);
  EXPECT_FALSE(o.summary.predictions.has_value());
  EXPECT_FALSE(summary_json(o.summary).contains("predictions"));
  EXPECT_GT(r.summary.batch_size.mean, o.summary.batch_size.mean);
  EXPECT_GT(r.summary.output_tokens_per_s, o.summary.output_tokens_per_s);
}

}  // namespace
}  // namespace seer
