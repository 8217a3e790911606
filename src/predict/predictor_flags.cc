#include "predict/predictor_flags.h"

#include "common/error.h"
#include "predict/predictor_file.h"

namespace seer {
namespace {

bool is_file_spec(const std::string& spec) {
  return spec != "oracle" && !spec.starts_with("noisy:") && looks_like_predictor_file(spec);
}

// Plans with the upper end of the predicted bucket [S3], whatever finer token
// estimate the wrapped predictor makes.
class BucketBoundPredictor final : public LengthPredictor {
 public:
  BucketBoundPredictor(std::unique_ptr<LengthPredictor> inner, LengthBuckets buckets)
      : inner_(std::move(inner)), buckets_(buckets) {}
  std::string name() const override { return inner_->name() + " (bucket bound)"; }
  LengthPrediction predict(const LengthQuery& q) override {
    LengthPrediction p = inner_->predict(q);
    p.tokens = buckets_.upper_bound(p.bucket);
    return p;
  }
  void observe(const LengthOutcome& o) override { inner_->observe(o); }
  PredictorStats stats() const override { return inner_->stats(); }

 private:
  std::unique_ptr<LengthPredictor> inner_;
  LengthBuckets buckets_;
};

}  // namespace

LengthBuckets predictor_buckets(const PredictorFlags& flags, int32_t max_model_len) {
  if (is_file_spec(flags.spec)) return load_predictor_file(flags.spec).model.buckets;
  return LengthBuckets::equal(flags.max_len > 0 ? flags.max_len : max_model_len, flags.buckets);
}

std::unique_ptr<LengthPredictor> make_predictor_from_flags(const PredictorFlags& flags, int32_t max_model_len) {
  if (flags.buckets < 1 || flags.buckets > 4096) fail("--predictor-buckets must be in [1, 4096], got {}", flags.buckets);
  if (flags.max_len < 0) fail("--predictor-max-len must be >= 0, got {}", flags.max_len);
  if (flags.reserve != "bucket" && flags.reserve != "estimate")
    fail("--predictor-reserve must be bucket or estimate, got '{}'", flags.reserve);
  if (!flags.enabled()) return nullptr;
  PredictorOptions options;
  options.buckets = predictor_buckets(flags, max_model_len);
  options.seed = flags.seed;
  if (!flags.errors.empty() && !flags.spec.starts_with("noisy:"))
    fail("--predictor-errors applies to --predictor noisy:ACC only (got --predictor {})", flags.spec);
  options.error_distribution = flags.errors;
  options.retrain = flags.retrain;
  auto predictor = make_length_predictor(flags.spec, options);
  if (flags.reserve == "bucket" && is_file_spec(flags.spec))
    return std::make_unique<BucketBoundPredictor>(std::move(predictor), options.buckets);
  return predictor;
}

void check_padding_flag(const std::optional<double>& padding) {
  if (padding && !(*padding >= 0 && *padding <= 10)) fail("--padding must be in [0, 10], got {}", *padding);
}

}  // namespace seer
