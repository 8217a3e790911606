#include "predict/length_predictor.h"

#include <algorithm>

#include <charconv>
#include <filesystem>

#include "common/error.h"
#include "predict/noisy_predictor.h"
#include "predict/predictor_file.h"
#include "predict/retraining_predictor.h"
#include "predict/trained_predictor.h"

namespace seer {

LengthBuckets LengthBuckets::equal(int32_t max_len, int32_t count) {
  if (max_len <= 0 || count <= 0) fail("length buckets: max_len ({}) and count ({}) must be > 0", max_len, count);
  return LengthBuckets{count, (max_len + count - 1) / count};
}

int32_t LengthBuckets::bucket_of(int32_t length) const {
  return std::clamp(length / width, 0, count - 1);
}

LengthPrediction OraclePredictor::predict(const LengthQuery& q) {
  if (q.true_output_len < 0)
    fail("oracle predictor: request '{}' has no true output length (the oracle needs a trace)", q.name);
  return LengthPrediction{buckets_.bucket_of(q.true_output_len), q.true_output_len};
}

namespace {

std::unique_ptr<LengthPredictor> make_noisy(std::string_view spec, const PredictorOptions& options) {
  std::string_view acc = spec.substr(6);
  double accuracy = -1;
  auto [end, ec] = std::from_chars(acc.data(), acc.data() + acc.size(), accuracy);
  if (ec != std::errc() || end != acc.data() + acc.size() || !(accuracy >= 0 && accuracy <= 1))
    fail("--predictor '{}': noisy:<accuracy> needs an accuracy in [0, 1], e.g. noisy:0.9", spec);
  const std::string path =
      options.error_distribution.empty() ? default_error_distribution_path() : options.error_distribution;
  return std::make_unique<NoisyPredictor>(accuracy, options.buckets, load_error_distribution(path), options.seed);
}

std::unique_ptr<LengthPredictor> load_trained(const std::string& path, const PredictorOptions& options) {
  auto model = std::make_shared<const LengthModel>(load_predictor_file(path).model);
  const std::string name = std::filesystem::path(path).filename().string();
  if (!options.retrain) return std::make_unique<TrainedPredictor>(std::move(model), name);
  RetrainOptions retrain;
  retrain.seed = options.seed;
  return std::make_unique<RetrainingPredictor>(std::move(model), name, retrain);
}

}  // namespace

std::unique_ptr<LengthPredictor> make_length_predictor(std::string_view spec, const PredictorOptions& options) {
  if (spec == "oracle") return std::make_unique<OraclePredictor>(options.buckets);
  if (spec.starts_with("noisy:")) return make_noisy(spec, options);
  const std::string path(spec);
  if (!spec.empty() && std::filesystem::is_regular_file(path)) return load_trained(path, options);
  fail("--predictor '{}': expected oracle, noisy:<accuracy> or a trained predictor file (no such file)", spec);
}

}  // namespace seer
