#include "predict/predictor_flags.h"

#include "common/error.h"
#include "scheduler/scheduler.h"

namespace seer {

LengthBuckets predictor_buckets(const PredictorFlags& flags, int32_t max_model_len) {
  return LengthBuckets::equal(flags.max_len > 0 ? flags.max_len : max_model_len, flags.buckets);
}

std::unique_ptr<LengthPredictor> make_predictor_from_flags(const PredictorFlags& flags, int32_t max_model_len) {
  if (flags.buckets < 1 || flags.buckets > 4096) fail("--predictor-buckets must be in [1, 4096], got {}", flags.buckets);
  if (flags.max_len < 0) fail("--predictor-max-len must be >= 0, got {}", flags.max_len);
  if (!flags.enabled()) return nullptr;
  PredictorOptions options;
  options.buckets = predictor_buckets(flags, max_model_len);
  options.seed = flags.seed;
  options.retrain = flags.retrain;
  return make_length_predictor(flags.spec, options);
}

void require_predictor_for(const std::string& policy, const PredictorFlags& flags) {
  const PolicyInfo* info = find_policy(policy);
  if (info && info->needs_predictor && !flags.enabled())
    fail("--policy {} plans with predicted output lengths: give --predictor (a file from `seer predict train`; in "
         "`seer sim` also oracle or noisy:ACC)",
         policy);
}

}  // namespace seer
