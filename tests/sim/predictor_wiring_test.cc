// `seer sim`'s predictor flags reach the engine: every request gets a prediction
// from the chosen predictor and carries its trace prompt text; bad flags are errors
// naming the flag.
#include <gtest/gtest.h>

#include "common/error.h"
#include "sim/sim_options.h"
#include "sim/sim_test_util.h"

namespace seer {
namespace {

using testing::entry;
using testing::small_setup;

class PredictionRecorder final : public EngineObserver {
 public:
  void on_finished(const Request& r) override {
    predicted.push_back(r.predicted_output_len.value_or(-1));
    outputs.push_back(r.num_output());
    texts.push_back(r.prompt_text);
  }
  std::vector<int32_t> predicted, outputs;
  std::vector<std::string> texts;
};

TEST(SimPredictor, OracleSetsEveryRequestsPredictionToItsTrueLength) {
  std::vector<TraceEntry> trace = {entry("a", 0, 30, 7), entry("b", 0, 40, 90), entry("c", 0.1, 10, 300)};
  trace[0].prompt_tokens = -1;
  trace[0].prompt = "Name three primary colours.";
  SimSetup s = small_setup("vllm");
  s.predictor.spec = "oracle";
  PredictionRecorder rec;
  SimResult r = run_simulation(s, trace, &rec);
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(rec.predicted, rec.outputs);
  EXPECT_NE(std::find(rec.texts.begin(), rec.texts.end(), "Name three primary colours."), rec.texts.end());
}

TEST(SimPredictor, WithoutAPredictorNothingIsPredicted) {
  PredictionRecorder rec;
  run_simulation(small_setup("vllm"), {entry("a", 0, 30, 7)}, &rec);
  ASSERT_EQ(rec.predicted.size(), 1u);
  EXPECT_EQ(rec.predicted[0], -1);
}

TEST(SimPredictor, BadPredictorFlagsAreErrorsNamingTheFlag) {
  auto message_of = [](const SimSetup& s) {
    try {
      run_simulation(s, {entry("a", 0, 30, 7)});
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  SimSetup s = small_setup("vllm");
  s.predictor.spec = "crystal-ball";
  EXPECT_NE(message_of(s).find("--predictor"), std::string::npos);
  s.predictor.spec = "oracle";
  s.predictor.buckets = 0;
  EXPECT_NE(message_of(s).find("--predictor-buckets"), std::string::npos);
  s.predictor.buckets = 10;
  s.predictor.max_len = -5;
  EXPECT_NE(message_of(s).find("--predictor-max-len"), std::string::npos);
}

TEST(SimPredictor, OptionsCarryPredictorAndPadding) {
  SimOptions o;
  o.model = "Llama-2-7B";
  o.predictor.spec = "oracle";
  o.predictor.buckets = 20;
  o.predictor.max_len = 1000;
  o.padding = 0.25;
  SimSetup s = make_sim_setup(o);
  EXPECT_EQ(s.predictor.spec, "oracle");
  EXPECT_EQ(s.predictor.buckets, 20);
  EXPECT_EQ(s.predictor.max_len, 1000);
  EXPECT_EQ(s.scheduler.padding, 0.25);
  o.padding = -0.1;
  EXPECT_THROW(make_sim_setup(o), Error);
}

}  // namespace
}  // namespace seer
