#include "predict/predictor_eval.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "common/error.h"
#include "predict/trained_predictor.h"

namespace seer {
namespace {

constexpr int32_t kFineWidth = 32;

// The most frequent bucket among the training lengths.
int32_t majority_bucket(const std::vector<LengthExample>& train, const LengthBuckets& b) {
  std::vector<int64_t> counts(static_cast<size_t>(b.count), 0);
  for (const auto& e : train) ++counts[static_cast<size_t>(b.bucket_of(e.output_tokens))];
  return static_cast<int32_t>(std::max_element(counts.begin(), counts.end()) - counts.begin());
}

double mean_length(const std::vector<LengthExample>& train) {
  double sum = 0;
  for (const auto& e : train) sum += e.output_tokens;
  return train.empty() ? 0 : sum / static_cast<double>(train.size());
}

}  // namespace

nlohmann::ordered_json EvalReport::to_json() const {
  return {{"dataset", dataset},
          {"test_requests", test_requests},
          {"buckets", buckets},
          {"bucket_width", bucket_width},
          {"accuracy", accuracy},
          {"mean_bucket_distance", mean_bucket_distance},
          {"mae_tokens", mae_tokens},
          {"baseline_majority_accuracy", baseline_majority_accuracy},
          {"baseline_mean_mae_tokens", baseline_mean_mae_tokens},
          {"accuracy_width_32", accuracy_width_32},
          {"baseline_majority_accuracy_width_32", baseline_majority_accuracy_width_32},
          {"predict_time_ms_mean", predict_time_ms_mean}};
}

EvalReport evaluate_length_model(const LengthModel& model, const std::vector<LengthExample>& train,
                                 const std::vector<LengthExample>& test, const std::string& dataset) {
  if (test.empty()) fail("predictor evaluation: the test split is empty");
  const LengthBuckets& b = model.buckets;
  const LengthBuckets fine{(std::max(model.max_len, kFineWidth) + kFineWidth - 1) / kFineWidth, kFineWidth};
  const int32_t majority = majority_bucket(train, b), majority_fine = majority_bucket(train, fine);
  const double mean = mean_length(train);
  TrainedPredictor predictor(std::make_shared<LengthModel>(model), "eval");

  EvalReport r;
  r.dataset = dataset;
  r.test_requests = static_cast<int64_t>(test.size());
  r.buckets = b.count;
  r.bucket_width = b.width;
  int64_t correct = 0, correct_fine = 0, base = 0, base_fine = 0, wrong = 0, distance = 0;
  double abs_err = 0, base_err = 0, seconds = 0;
  for (const auto& e : test) {
    const auto t0 = std::chrono::steady_clock::now();
    const LengthPrediction p = predictor.predict_text(e.prompt);
    seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const int32_t truth = b.bucket_of(e.output_tokens), truth_fine = fine.bucket_of(e.output_tokens);
    const int32_t d = p.bucket - truth;
    ++r.bucket_offsets[d];
    correct += d == 0;
    wrong += d != 0;
    distance += std::abs(d);
    correct_fine += fine.bucket_of(p.tokens) == truth_fine;
    base += majority == truth;
    base_fine += majority_fine == truth_fine;
    abs_err += std::abs(p.tokens - e.output_tokens);
    base_err += std::abs(mean - e.output_tokens);
  }
  const double n = static_cast<double>(test.size());
  r.accuracy = correct / n;
  r.mean_bucket_distance = distance / n;
  r.mean_wrong_distance = wrong > 0 ? static_cast<double>(distance) / static_cast<double>(wrong) : 0;
  r.mae_tokens = abs_err / n;
  r.baseline_majority_accuracy = base / n;
  r.baseline_mean_mae_tokens = base_err / n;
  r.accuracy_width_32 = correct_fine / n;
  r.baseline_majority_accuracy_width_32 = base_fine / n;
  r.predict_time_ms_mean = seconds * 1e3 / n;
  return r;
}

BucketErrorDistribution error_distribution(const EvalReport& report, const std::string& source) {
  BucketErrorDistribution d;
  d.source = source;
  int64_t wrong = 0;
  for (const auto& [off, n] : report.bucket_offsets)
    if (off != 0) wrong += n;
  for (const auto& [off, n] : report.bucket_offsets)
    if (off != 0 && n > 0) d.offsets[off] = static_cast<double>(n) / static_cast<double>(wrong);
  return d;
}

void save_error_distribution(const std::string& path, const BucketErrorDistribution& d) {
  nlohmann::ordered_json offsets = nlohmann::ordered_json::object();
  for (const auto& [off, p] : d.offsets) offsets[std::to_string(off)] = p;
  nlohmann::ordered_json j{{"source", d.source}, {"offsets", offsets}};
  std::ofstream out(path);
  if (!out) fail("cannot write bucket error distribution {}", path);
  out << j.dump(2) << '\n';
  if (!out) fail("error writing bucket error distribution {}", path);
}

BucketErrorDistribution load_error_distribution(const std::string& path) {
  std::ifstream in(path);
  if (!in) fail("cannot open bucket error distribution {} (make it with `seer predict eval --errors-out`)", path);
  BucketErrorDistribution d;
  try {
    auto j = nlohmann::json::parse(in);
    d.source = j.value("source", "");
    double total = 0;
    for (const auto& [key, v] : j.at("offsets").items()) {
      size_t used = 0;
      const int32_t off = std::stoi(key, &used);
      const double p = v.get<double>();
      if (used != key.size() || off == 0 || !(p >= 0)) fail("{}: bad offset entry '{}': {}", path, key, v.dump());
      d.offsets[off] = p;
      total += p;
    }
    if (!(total > 0)) fail("{}: 'offsets' holds no probability", path);
    for (auto& [off, p] : d.offsets) p /= total;
  } catch (const nlohmann::json::exception& e) {
    fail("{}: bad bucket error distribution: {}", path, e.what());
  } catch (const std::logic_error& e) {  // std::stoi
    fail("{}: bad bucket error distribution: offsets must be integers ({})", path, e.what());
  }
  return d;
}

std::string default_error_distribution_path() {
  return (std::filesystem::path(SEER_DATA_DIR) / "predict" / "bucket_errors.json").string();
}

}  // namespace seer
