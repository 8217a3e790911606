#pragma once
// The trained length predictor (docs/predictor.md): features of Request::prompt_text
// scored by a LengthModel loaded from a predictor file. The model is immutable and
// shared, so RetrainingPredictor can swap a retrained copy in while this one runs.
#include <atomic>
#include <memory>
#include <string>

#include "predict/length_model.h"
#include "predict/length_predictor.h"

namespace seer {

class TrainedPredictor final : public LengthPredictor {
 public:
  TrainedPredictor(std::shared_ptr<const LengthModel> model, std::string name);
  std::string name() const override { return name_; }
  LengthPrediction predict(const LengthQuery& q) override;
  PredictorStats stats() const override { return PredictorStats{.predictions = predictions_.load()}; }
  LengthPrediction predict_text(std::string_view prompt) const;
  const LengthModel& model() const { return *model_; }
  std::shared_ptr<const LengthModel> shared_model() const { return model_; }

 private:
  std::shared_ptr<const LengthModel> model_;
  TextFeaturizer featurizer_;
  std::string name_;
  std::atomic<int64_t> predictions_{0};
};

// Predicts with `model` (no Request needed; evaluation and retraining use it).
LengthPrediction predict_length(const LengthModel& model, std::string_view prompt);

}  // namespace seer
