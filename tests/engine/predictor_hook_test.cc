// The engine asks its LengthPredictor for every new request and reports every
// finished one back to it.
#include <gtest/gtest.h>

#include "engine/engine_harness.h"
#include "predict/length_predictor.h"

namespace seer {
namespace {

class CountingPredictor final : public LengthPredictor {
 public:
  std::string name() const override { return "counting"; }
  LengthPrediction predict(const LengthQuery& q) override {
    ++predicted;
    return LengthPrediction{0, 3};
  }
  void observe(const LengthOutcome& o) override { observed_outputs.push_back(o.output_len); }
  int predicted = 0;
  std::vector<int32_t> observed_outputs;
};

TEST(EnginePredictor, SetsPredictionsBeforeSchedulingAndObservesFinishes) {
  CountingPredictor predictor;
  EngineConfig ec;
  ec.predictor = &predictor;
  SchedulerConfig sc;
  sc.policy = "vllm";
  testing::EngineHarness h(sc, KvConfig{4, 64, 0, 0}, ec);
  RequestId a = h.add("a", {1, 2, 3}, 8, 5);
  ASSERT_TRUE(h.engine->requests().get(a).predicted_output_len.has_value());
  EXPECT_EQ(*h.engine->requests().get(a).predicted_output_len, 3);

  Request preset;
  preset.external_id = "preset";
  preset.prompt_tokens = {4, 5};
  preset.sampling.max_tokens = 4;
  preset.predicted_output_len = 2;
  RequestId b = h.engine->add_request(preset);
  EXPECT_EQ(*h.engine->requests().get(b).predicted_output_len, 2);  // the caller's value is kept
  EXPECT_EQ(predictor.predicted, 1);

  ASSERT_TRUE(h.run());
  EXPECT_EQ(predictor.observed_outputs.size(), 2u);
}

}  // namespace
}  // namespace seer
