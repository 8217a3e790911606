#include "predict/trained_predictor.h"

namespace seer {

TrainedPredictor::TrainedPredictor(std::shared_ptr<const LengthModel> model, std::string name)
    : model_(std::move(model)), featurizer_(model_->features), name_(std::move(name)) {}

LengthPrediction TrainedPredictor::predict(const LengthQuery& q) {
  predictions_.fetch_add(1, std::memory_order_relaxed);
  return predict_text(q.prompt_text);
}

LengthPrediction TrainedPredictor::predict_text(std::string_view prompt) const {
  return model_->predict(featurizer_.extract(prompt));
}

LengthPrediction predict_length(const LengthModel& model, std::string_view prompt) {
  return model.predict(TextFeaturizer(model.features).extract(prompt));
}

}  // namespace seer
